"""decompose_question and retrieve_sub_questions: a question of several parts, each answered
from its own evidence (rag_graph/flow/nodes/decomposition.py)."""
from rag_graph.answer.extractive import ExtractiveGenerator
from rag_graph.flow.nodes.decomposition import split_question
from flow_fakes import FakeRetriever, chunk, overtime, run, unrelated  # noqa: F401 (fixtures too)


def test_each_part_of_a_compound_question_gets_its_own_sentence(embedder):
    hours = chunk("library::opening-hours::0",
                  "The reading room opens at 9 am on weekdays, and at 11 am on Saturdays. Quiet is kept. "
                  "Saturday opening applies from October 1 through March 31.")
    premiums = chunk("payroll::shift-premiums::0",
                     "The Day Shift premium adds 5% to base pay for 8 hours. "
                     "The Night Shift premium adds 15% to base pay.")
    retriever = FakeRetriever([hours, premiums])
    out = run(embedder, "what time does the reading room open on Saturdays, and in which months does that apply?",
              retriever)["final_output"]
    assert out["status"] == "answered"
    assert "11 am" in out["answer"] and "October 1 through March 31" in out["answer"]
    out = run(embedder, "how does the day shift premium compare to the night shift premium?", retriever)["final_output"]
    assert "5%" in out["answer"] and "15%" in out["answer"]


def test_each_side_of_a_comparison_is_answered_by_a_sentence_about_it(embedder):
    # 18F's overtime page: two sentences about travel comp time hold every word of "what happens
    # to my regular comp time" between them, and still do not answer it.
    travel = chunk("overtime::travel-comp-time::0",
                   "If you leave the agency, any unused travel comp time will be forfeited. Travel comp time, "
                   "unlike regular comp time, fills the gap when you travel outside regular work hours.",
                   title="Compensation for working extra hours", relevance=0.7, answers_parts=[0, 1])
    regular = chunk("overtime::comp-time::0", "Comp time is leave you receive instead of overtime pay. "
                    "If you leave the agency, your comp time will be paid out.",
                    title="Compensation for working extra hours", similarity=0.6, relevance=0.6)
    elsewhere = unrelated("faq::what-happens", [
        "What happens at the agency when a holiday falls on a weekend? It moves to Friday.",
        "What happens to your badge when you leave? Return it to the agency."])
    parts = ["If I leave the agency, what happens to my regular comp time",
             "If I leave the agency, what happens to my travel comp time"]
    generator = ExtractiveGenerator(FakeRetriever([travel, regular, *elsewhere]).vocabulary, embedder)
    answer = generator.generate(" versus ".join(parts) + "?", [travel, regular], "", parts)["answer"]
    assert "will be forfeited" in answer and "will be paid out" in answer


def test_the_options_after_a_which_question_are_its_parts_and_each_answer_names_its_section(engine):
    """ "which maxes out sooner, profit-sharing shares or liquidity pool shares?" was one question:
    the liquidity pool's rule filled the answer. Each option is now a part; answered from two
    sections of one document, each sentence says which section it speaks for ("It includes…" is
    about Enterprise)."""
    from rag_graph.flow.nodes.decomposition import split_question

    assert [p.text for p in split_question("which maxes out sooner, profit-sharing shares or liquidity pool shares?")] == [
        "which maxes out sooner profit-sharing shares", "which maxes out sooner liquidity pool shares"]
    state = engine.run("which plan keeps audit logs longer, Professional or Enterprise?")
    assert len(state["sub_questions"]) == 2
    answer = state["final_output"]["answer"]
    assert "Professional: Audit logs are kept for 1 year." in answer
    assert "Enterprise: It includes unlimited seats" in answer


DEVICES = [chunk("devices::operating-system::0", "Everyone on the operations team runs Omarchy, our Linux setup, on "
                 "their work computer.", similarity=0.42, title="Work devices", section="Operating system"),
           chunk("devices::internal-access::0", "Access to internal systems goes through our Tailscale VPN, and "
                 "credentials live in 1Password.", similarity=0.40, title="Work devices", section="Internal access"),
           *unrelated("benefits::other", ["The office kitchen is restocked every Monday.",
                                          "Parking permits are handed out by reception."])]


def test_a_question_of_two_parts_is_answered_when_each_part_has_its_evidence(embedder, engine):
    # Neither chunk holds enough of the whole question ("joining the ops crew next week…") to
    # vouch for it, though each answers its own part: the question was declined.
    out = run(embedder, "I'm joining the ops crew next week - what OS will I be running, and how is access to "
              "internal stuff handled?", FakeRetriever(DEVICES))
    assert len(out["sub_questions"]) == 2
    assert out["final_output"]["status"] == "answered"
    assert "Omarchy" in out["final_output"]["answer"] and "Tailscale" in out["final_output"]["answer"]
    # parts that nothing answers are still declined
    out = run(embedder, "is there a dress code, and can I bring my dog to work?", FakeRetriever(DEVICES))
    assert out["final_output"]["status"] == "insufficient_context"
    # on the bundled corpus, this took a rewritten second search to be answered
    state = engine.run("how do I set up my regular work-from-home days, and what hours do I need to be online?")
    assert not state["query_rewrites"]
    answer = state["final_output"]["answer"]
    assert "BambooHR" in answer and "10:00 to 15:00" in answer
    assert answer.index("BambooHR") < answer.index("10:00 to 15:00")  # the parts in the order asked


def test_the_part_least_answered_gets_the_last_sentence(embedder):
    # Two sentences on fingerprints (room 1217, then Chicago's security office) filled the answer
    # before the turnstiles part had its turn.
    dc = chunk("office-dc::badge::0", "Fingerprints and the photo for your badge are taken in room 1217. Badge "
               "pickup is in the same room 1217. After pickup, you need to get it activated for the turnstiles in "
               "room G151.", title="Washington office", section="Fingerprints and badge", relevance=0.7,
               answers_parts=[0, 1])
    chicago = chunk("office-chicago::badge::0", "Fingerprints and badge photos for new hires can be done at the "
                    "security office on the second floor, room 212.", title="Chicago office",
                    section="Fingerprints and badge", relevance=0.6)
    question = ("first day at the DC office - where do I get fingerprinted for my badge, and where do I get "
                "it working on the turnstiles?")
    parts = split_question(question)
    assert len(parts) == 2
    generator = ExtractiveGenerator(FakeRetriever([dc, chicago]).vocabulary, embedder)
    answer = generator.generate(question, [dc, chicago], "", parts)["answer"]
    assert "room 1217" in answer and "G151" in answer


def test_a_multi_part_answer_takes_the_parts_in_the_order_they_were_asked(embedder):
    # Late interaction ranked the flexible schedule's chunk first, and the answer said "Yes" to
    # the flexible schedule before "No" to the compressed one the asker named first.
    flexible = chunk("schedules::flexible::0", "On a flexible work schedule you can earn and use credit hours.",
                     title="Work schedules", section="Flexible schedule", relevance=0.7, answers_parts=[1])
    compressed = chunk("schedules::compressed::0", "On a compressed work schedule credit hours are not available.",
                       title="Work schedules", section="Compressed schedule", relevance=0.6, answers_parts=[0])
    question = "can I earn credit hours on a compressed schedule, and on a flexible one?"
    parts = split_question(question)
    assert len(parts) == 2
    generator = ExtractiveGenerator(FakeRetriever([flexible, compressed]).vocabulary, embedder)
    answer = generator.generate(question, [flexible, compressed], "", parts)["answer"]
    assert answer.index("not available") < answer.index("earn and use")


def test_each_side_of_a_comparison_is_answered_from_its_own_section_not_the_other_sides(overtime):  # noqa: F811
    """18F's "what happens to my regular comp time versus my travel comp time?" answered both
    parts about travel comp time: the part about regular comp time found "Understanding travel
    comp time" first, a section full of "regular" and "comp time". A section headed by the
    other option is no evidence for this one."""
    state = overtime.run("If I leave GSA, what happens to my regular comp time versus my travel comp time?")
    assert len(state["sub_questions"]) == 2
    answer = state["final_output"]["answer"]
    assert "your comp time will be paid out" in answer, answer
    assert "unused travel comp time will be forfeited" in answer, answer


def test_two_questions_in_one_message_are_no_comparison_of_options(engine):
    """Parts that share fewer words than each has of its own ask separate things: the section
    headed "Working Hours" still answers "what hours do I need to be online?" though it also
    holds "work" from the other part."""
    state = engine.run("how do I set up my regular work-from-home days, and what hours do I need to be online?")
    assert len(state["sub_questions"]) == 2
    answer = state["final_output"]["answer"]
    assert "BambooHR" in answer and "Core hours are 10:00 to 15:00" in answer, answer
