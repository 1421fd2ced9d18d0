"""A short follow-up pointing back is read a second way, from what the last answer named, when the
evidence for its first reading is too weak to answer from (rag_graph/flow/nodes/reading.py).
Real bundled corpus, LanceDB table and embedding model (the `engine` fixture)."""
from rag_graph.scoring.pointing import answer_reading, points_back_short
from rag_graph.language.question import Question

MISCONDUCT = [{"role": "user", "content": "I want to report misconduct without giving my name, how do I do that?"},
              {"role": "assistant", "content": "Use the ethics line, run by an independent provider, online or by phone."}]


def test_it_is_the_thing_the_last_answer_named(engine):
    """"it" is the ethics line, named only in the answer. Read from the last question (reporting
    misconduct anonymously), the evidence says nothing of weekends and the bot declined; read
    from the answer, the Speaking up section says the line is available 24 hours a day."""
    out = engine.run("is it open on weekends?", MISCONDUCT)["final_output"]
    assert out["status"] == "answered", out["answer"]
    assert "24 hours a day" in out["answer"]
    assert any(c["section"].endswith("Speaking up") for c in out["citations"]), out["citations"]


def test_a_follow_up_answered_from_its_first_reading_is_not_read_again(engine):
    """The first reading (the sick days the last question asked about) answers: the answer's
    words ("separate", "vacation") are never searched, and the reply is the doctor's-note rule."""
    history = [{"role": "user", "content": "how many sick days do we get?"},
               {"role": "assistant", "content": "You get 10 paid sick days per year, separate from vacation."}]
    state = engine.run("do I need a doctor's note for those?", history)
    assert "separate" not in state["retrieval_query"], state["retrieval_query"]
    assert "3 consecutive" in state["final_output"]["answer"], state["final_output"]["answer"]


def test_when_neither_reading_answers_the_turn_is_declined_as_first_read(engine):
    """"is it free for contractors?": the documents say nothing of contractors and the ethics
    line. The answer's reading is searched and cannot answer either; the bot declines as the
    first reading did (its search, its gap), not from the words it borrowed from the answer."""
    state = engine.run("is it free for contractors?", MISCONDUCT)
    out = state["final_output"]
    assert out["status"] == "insufficient_context", out["answer"]
    assert "contractors" in out["knowledge_gap"]
    assert "ethics" not in state["retrieval_query"], state["retrieval_query"]
    assert out["retrieval_attempts"] == 1  # the first reading's one search; its rewrite gave way to the other reading


def test_only_a_short_turn_pointing_back_is_read_from_the_answer():
    frequency = {"ethic": 3, "lin": 40, "independent": 2, "provid": 5, "report": 30, "onlin": 50, "phon": 20}
    read = answer_reading(Question("is it open on weekends?", "report misconduct"), MISCONDUCT, frequency)
    assert read is not None and read.own == "is it open on weekends?"
    assert read.carried.startswith("report misconduct ")
    # the answer's rarest words the thread had not asked about, rarest first
    assert read.carried.split()[2:] == ["independent", "ethics"]
    # not a follow-up: nothing is carried, nothing is read a second way
    assert answer_reading(Question("is it open on weekends?"), MISCONDUCT, frequency) is None
    # "if it's a breaking change": this "it" points at no thing
    assert not points_back_short("and if it's a breaking change?")
    # a longer turn: the word points inside the question
    assert not points_back_short("I'll mostly just use it for data on trips abroad, is that a problem?")


def test_the_other_reading_answers_only_with_the_kind_of_value_asked_for():
    """Borrowed words make evidence look stronger than it is: after "when do I sign up for the
    FSA?" → "…otherwise you wait for Open Season in mid-November", the answer's reading of
    "what's the most I can put in it each year?" found the enrolment paragraph and quoted the
    deadline. A reply of the other reading must give an amount when one is asked for; routed
    otherwise, the turn is declined as first read. The first reading is judged as before."""
    from rag_graph.flow.graph import route_by_grounding

    deadline = {"sentences": [{"text": "If you miss this deadline, you must wait until Open Season "
                                       "(mid-November) to enroll for the following calendar year.", "chunk_ids": ["fsa"]}]}
    limit = {"sentences": [{"text": "You can put up to $3,300 a year into a health care FSA.", "chunk_ids": ["fsa"]}]}
    asked = {"normalized_query": "what's the most I can put in it each year?", "grounding_status": "grounded"}
    assert route_by_grounding({**asked, "draft_answer": deadline, "first_reading": {"ranked_chunks": []}}) == "give_up"
    assert route_by_grounding({**asked, "draft_answer": limit, "first_reading": {"ranked_chunks": []}}) == "grounded"
    assert route_by_grounding({**asked, "draft_answer": deadline}) == "grounded"  # the first reading: as before
    yes_no = {"normalized_query": "is it open on weekends?", "grounding_status": "grounded", "draft_answer": deadline,
              "first_reading": {"ranked_chunks": []}}
    assert route_by_grounding(yes_no) == "grounded"  # a yes/no question asks for no kind of value
