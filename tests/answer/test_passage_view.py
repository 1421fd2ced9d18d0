"""The passage view: when the writer's best sentence does not win clearly, the answer shows the
passage around it (rag_graph/answer/passage_view.py)."""
import dataclasses

from rag_graph.answer.passage_view import around, unclear
from rag_graph.answer.passages import Candidate
from rag_graph.tuning import DEFAULT
from flow_fakes import chunk, compose

# 37signals' benefits page as the flow retrieved it for "what's the most I can stash in the healthcare
# FSA for the year?": the best sentence was the dependent-care maximum, the one after $3,300's.
BENEFITS = [
    chunk('benefits-and-perks::flexible-spending-account-fsa::0',
          'The FSA is an account where you can set aside pre-tax money for out-of-pocket medical expenses, such as prescriptions, over-the-counter medicine, vision care, etc. You have to decide up front how much money you want to put in the account, and the max is $3,300/year per person in your household. There is a separate type of FSA for dependent care, and the max for that plan is $7,500/year or $3,750/year if you split this with a partner. This is an entirely optional program. Open enrollment is in December every year, with new coverage beginning January 1. Both FSAs are through FLEX, and detail can be found [in Basecamp](https://app.3.basecamp.com/2914079/buckets/28168307/vaults/7783033318).',
          title='Benefits & Perks', section='Flexible Spending Account (FSA)', relevance=0.70, similarity=0.70),
    chunk('benefits-and-perks::paid-time-off::0',
          '37signals offers 20 days of vacation and personal days plus [11 local holidays](https://3.basecamp.com/2914079/buckets/28168307/documents/5061131347) every year. We ask that you [track your time off](https://3.basecamp.com/2914079/projects/14971171). Your vacation time is prorated based on your start date during your first year at 37signals. Your vacation time rolls over year to year with a maximum bank of 27 days at any time. If you are terminated or resign from 37signals with vacation days in your bank, you’ll be paid the monetary equivalent for those unused days (prorated at the time of your departure). Unused holidays are not paid upon termination or resignation.',
          title='Benefits & Perks', section='Paid Time Off', relevance=0.65, similarity=0.65),
    chunk('benefits-and-perks::medical-insurance::0',
          'In the United States, medical insurance is provided through Blue Cross Blue Shield PPO. The company pays 75% of the premium and the employee pays the other 25%. Open enrollment is in November every year, with new coverage beginning December 1. Marriages and domestic partnerships are covered. You’re eligible for coverage on your first day of employment. If you are terminated or resign from 37signals, your coverage will end on the last day of the month of your separation date and you may be eligible for continued coverage after that (COBRA).\n\nEach pay period, you’ll see a payroll deduction for medical insurance:',
          title='Benefits & Perks', section='Medical Insurance', relevance=0.60, similarity=0.60),
    chunk('benefits-and-perks::life-insurance::0',
          '37signals offers a $400,000 life insurance/AD+D policy to all staff through MetLife. The company pays 100% of the premium. You’re eligible for coverage on your first day of employment, and it’s terminated automatically on your final day of employment. Open enrollment is in November every year, and participants are auto-enrolled at that time.',
          title='Benefits & Perks', section='Life Insurance', relevance=0.55, similarity=0.55),
    chunk('benefits-and-perks::disability-insurance::0',
          "37signals provides MetLife Short Term and Long Term Disability policies to all US employees, at no cost to the employee. The Short Term policy may replace up to 70% of your salary, up to 12 weeks and up to $3,000 per week. There is a 7-calendar-day waiting period for Short Term Disability. The Long Term policy may replace up to 60% of your salary, up to $12,000 per month. There's a 90 day waiting period for Long Term Disability.\n\nYou’re eligible for coverage on your first day of employment, and the policies will terminate on your final day of employment.",
          title='Benefits & Perks', section='Disability Insurance', relevance=0.50, similarity=0.50),
]
OFF = dataclasses.replace(DEFAULT, passage_chars=0)
ON = DEFAULT  # on: every neighbour that keeps the passage as close to the question joins
CLOSE_RUNNER_UP = dataclasses.replace(ON, passage_margin=0.9)


def _candidate(score: float, position: int, text: str = "A sentence of the passage on leave.", rank: int = 0,
               terms=("leav",)) -> Candidate:
    return Candidate(score, score, rank, position, text, f"c{rank}", set(terms), frozenset())


def _each_closer(texts):  # each sentence brings the passage closer to the question
    return [0.1 * text.count(".") for text in texts]


def test_the_answer_shows_the_passage_around_the_best_sentence_when_it_answers(embedder):
    question = "what's the most I can stash in the healthcare FSA for the year?"
    single = compose(question, BENEFITS, embedder, tuning=OFF)["answer"]
    passage = compose(question, BENEFITS, embedder, tuning=ON)["answer"]
    assert "$3,300" in passage and "$3,300" not in single, single
    assert len(passage) <= ON.passage_chars  # the passage, not the page
    # the neighbours that move the passage away from the question stay out
    assert "entirely optional" not in passage and "Open enrollment" not in passage, passage


def test_the_passage_grows_after_then_before_within_its_length():
    sentences = [_candidate(1.0, at, "x" * 100 + ".") for at in range(8)]
    best = sentences[4]
    short = dataclasses.replace(ON, passage_chars=350)
    added = around(best, sentences, [best], short, _each_closer)
    assert [c.position for c in added] == [5, 3]  # 3 x 101 characters fit in 350; after comes first
    # a sentence already picked counts toward the length and is not repeated
    assert around(best, sentences, [best, sentences[5]], short, _each_closer) == [sentences[6]]


def test_a_neighbour_that_moves_the_passage_away_from_the_question_stays_out():
    sentences = [_candidate(1.0, at, f"Sentence {at} of the passage.") for at in range(5)]
    best = sentences[2]

    def closeness(texts):  # each sentence brings the passage closer, but sentence 3 moves it away
        return [0.1 * text.count(".") - (1.0 if "Sentence 3" in text else 0.0) for text in texts]

    assert [c.position for c in around(best, sentences, [best], ON, closeness)] == [1, 0]
    assert around(best, sentences, [best], ON, None) == []  # no embedding model: no measure, no passage
    as_close = around(best, sentences, [best], ON, lambda texts: [0.5] * len(texts))
    assert as_close == []  # a neighbour must bring the passage closer, not leave it as close


def test_an_example_and_another_chunk_stay_out_of_the_passage():
    best = _candidate(1.0, 2)
    others = [_candidate(1.0, 1, "For example: a trip to Denver on leave."), best, _candidate(1.0, 3, rank=1)]
    assert around(best, others, [best], ON, _each_closer) == []


def test_only_a_close_runner_up_shows_the_passage_when_a_margin_is_set():
    clear, close = [_candidate(2.0, 0), _candidate(1.0, 5)], [_candidate(2.0, 0), _candidate(1.9, 5)]
    assert not unclear(clear, CLOSE_RUNNER_UP) and unclear(close, CLOSE_RUNNER_UP)
    assert unclear(clear, ON)  # margin 0: always
    assert not unclear(close, OFF)  # the view is off


def test_a_list_s_other_items_stay_out_of_the_answer(engine):
    """The office page lists meeting rooms, phone booths and Wi-Fi as items of one list. Asked for
    the Wi-Fi network, the answer is the Wi-Fi item; the rooms and booths beside it are siblings,
    which the passage view without its closeness gate showed in front of it."""
    answer = engine.run("What's the name of the staff wifi network in the office?")["final_output"]["answer"]
    assert "Orrinfold-Staff" in answer and "Meeting rooms" not in answer and "Phone booths" not in answer, answer


def test_the_section_s_next_rule_stays_out_of_the_answer(engine):
    """Asked how many sick days there are, the answer is the allowance and what they cover; the
    doctor's-note rule and the disability insurance that follow in the section are another topic."""
    answer = engine.run("how many paid sick days do I have?")["final_output"]["answer"]
    assert "10 paid sick days" in answer and "doctor" not in answer and "disability" not in answer, answer
