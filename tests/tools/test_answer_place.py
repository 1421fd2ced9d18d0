"""Where the answer is when the reply misses it (rag_graph/tools/answer_place.py): the step of the
flow each dev question's answering text is first found at, counted per corpus."""
from rag_graph.tools import answer_place
from rag_graph.tools.answer_place import STEPS
from rag_graph.tools.judged_inclusion import ANSWERS, DISTRACTOR
from rag_graph.tools.question_sets import Case


def _record(question, split="dev", recall=0.0, pool=(), outside=(), context=(), ranked=(), retrieved=(),
            indexed=0, corpus="c"):
    """One recorded question whose keyword "k" the reply misses (recall 0) or holds (recall 1);
    the lead is pool place 0. Chunks are (chunk_id, holds "k")."""
    chunks = lambda found: [{"chunk_id": cid, "held": ["k"] if held else []} for cid, held in found]  # noqa: E731
    return {"set": "s", "corpus": corpus, "question": question, "split": split, "status": "answered",
            "keywords": ["k"], "recall": recall, "missed": [] if recall else ["k"],
            "pool": [{"text": f"{question} {n}", "rank": 0, "position": n, "last": n, "held": ["k"] if held else []}
                     for n, held in enumerate(pool)],
            "outside": [{"text": "o", "rank": 1, "position": 3, "place": 12, "held": ["k"]}] if outside else [],
            "context": chunks(context), "ranked": chunks(ranked), "retrieved": chunks(retrieved),
            "indexed": {"k": indexed}, "lead": 0 if pool else -1}


def test_each_question_is_placed_at_the_first_step_that_holds_its_answer():
    judged = {("s", "judged", "judged 0"): DISTRACTOR, ("s", "judged", "judged 5"): ANSWERS}
    cases = {
        "early": _record("early", pool=[False, False, True]),
        "late": _record("late", pool=[False] * 6 + [True]),
        # the lead holds the keyword but a person judged it a distractor; place 5 was judged to answer
        "judged": _record("judged", pool=[True] + [False] * 5, recall=1.0),
        "outside": _record("outside", pool=[False], outside=True, context=[("a", True)]),
        "chunk": _record("chunk", pool=[False], context=[("a", True)]),
        "not given": _record("not given", pool=[False], context=[("a", False)], ranked=[("a", False), ("b", True)]),
        "declined": _record("declined", ranked=[("a", True)]),
        "cut": _record("cut", pool=[False], context=[("a", False)], ranked=[("a", False)],
                       retrieved=[("a", False), ("z", True)]),
        "not retrieved": _record("not retrieved", pool=[False], indexed=2),
        "nowhere": _record("nowhere", pool=[False]),
    }
    placed = {name: answer_place.step(record, judged) for name, record in cases.items()}
    assert placed == {"early": STEPS[0], "late": STEPS[1], "judged": STEPS[1], "outside": STEPS[2],
                      "chunk": STEPS[3], "not given": STEPS[4], "declined": STEPS[5], "cut": STEPS[6],
                      "not retrieved": STEPS[7], "nowhere": STEPS[8]}


def test_the_table_counts_dev_questions_only_by_corpus():
    question = "q"
    judged = {("s", question, f"{question} 0"): DISTRACTOR}
    records = [_record(question, pool=[False, False, True], corpus="a"),
               _record(question, pool=[False, False, True], corpus="b", recall=1.0),
               _record(question, pool=[False] * 6 + [True], corpus="b"),
               # a test half is never counted, whatever it holds
               _record(question, split="test", pool=[False, True], corpus="a")]
    groups = answer_place.table(records, judged)
    distractor, missed = groups["lead judged distractor"], groups["reply misses a keyword"]
    assert {corpus: dict(counts) for corpus, counts in distractor.items()} == {"a": {STEPS[0]: 1}, "b": {STEPS[0]: 1, STEPS[1]: 1}}
    assert {corpus: dict(counts) for corpus, counts in missed.items()} == {"a": {STEPS[0]: 1}, "b": {STEPS[1]: 1}}


def test_a_test_half_question_is_never_asked():
    class Unaskable:
        def run(self, *args, **kwargs):
            raise AssertionError("a test-half question was asked")

    case = Case(question="how long?", keywords=["k"], category="fact", split="test")
    assert answer_place.record_case(Unaskable(), case) == {"question": "how long?", "split": "test"}
