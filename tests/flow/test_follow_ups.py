"""prepare_query: a follow-up carries the thread's subject (rag_graph/flow/nodes/query.py)."""
import pytest

from flow_fakes import FakeRetriever, chunk, compose, one_document_engine, run  # noqa: F401 (fixtures too)
from rag_graph.language.question import Question


def test_follow_up_is_resolved_from_thread_history(engine):
    history = [{"role": "user", "content": "Who is our Head of People?"},
               {"role": "assistant", "content": "Ines Castellano is our Head of People."}]
    state = engine.run("when did she join?", history)
    assert "castellano" in state["retrieval_query"].lower()
    assert state["final_output"]["status"] == "answered"
    assert "March 2019" in state["final_output"]["answer"]


def test_follow_up_about_an_uncovered_group_names_the_gap(engine):
    history = [{"role": "user", "content": "How many days per week can employees work remotely?"},
               {"role": "assistant", "content": "Up to 3 days a week with manager approval."}]
    out = engine.ask("what about contractors?", history)
    assert out["status"] == "insufficient_context" and "contractors" in out["knowledge_gap"]


@pytest.mark.parametrize("question,expected", [
    ("and the Professional tier?", "1 TB"),
])
def test_follow_up_borrows_the_subject_of_the_previous_question(engine, question, expected):
    history = [{"role": "user", "content": "How much storage does the Team tier include?"},
               {"role": "assistant", "content": "Team includes 100 GB of storage."}]
    state = engine.run(question, history)
    assert "storage" in state["retrieval_query"]
    assert any("1 TB" in c["text"] for c in state["ranked_chunks"][:3])


def test_a_changelog_heading_like_new_or_fixed_is_no_subject_of_a_thread(engine):
    # The changelog's "### New" made "New" of "New York" the subject of a hotel thread
    mentions = engine.index.entities().mentions("and in New York? what about Fixed and Parking?")
    assert "New" not in [m.entity.name for m in mentions] and "Fixed" not in [m.entity.name for m in mentions]
    # and the travel policy's "(New York, San Francisco, …)" names New York, not York
    assert [m.entity.name for m in mentions][:1] == ["New York"]
    history = [{"role": "user", "content": "what's the hotel limit in London?"},
               {"role": "assistant", "content": "The nightly hotel cap is $250 including taxes."},
               {"role": "user", "content": "and in New York?"},
               {"role": "assistant", "content": "In high-cost cities the cap is $325 per night."}]
    assert "(new)" not in engine.run("does that include breakfast?", history)["retrieval_query"]


def test_a_follow_up_is_answered_by_its_own_words_before_the_borrowed_subject():
    premiums = chunk("payroll::shift-premiums::0",
                     "The Day Shift premium adds 5% to base pay for 8 hours. "
                     "Meanwhile the Night Shift premium adds 15% to base pay.")
    draft = compose(Question("and the night one?", "day shift premium pay"), [premiums])
    assert draft["answer"].startswith("Meanwhile the Night Shift premium")


def test_a_third_question_still_knows_what_the_thread_is_about(engine):
    # The second question carried "expense"; the third used to carry only the second's own words
    # ("long") and was answered from the changelog's approval flows.
    history = [{"role": "user", "content": "how do I submit an expense?"},
               {"role": "assistant", "content": "Submit it in Expensify with a photo of the receipt."},
               {"role": "user", "content": "how long do I have?"},
               {"role": "assistant", "content": "All expenses are submitted in Expensify within 30 days of the purchase."}]
    state = engine.run("who approves it?", history)
    assert "expense" in state["retrieval_query"]
    assert "Your manager" in state["final_output"]["answer"]
    history = [{"role": "user", "content": "what's the wellness allowance?"},
               {"role": "assistant", "content": "A wellness allowance of $75 per month."},
               {"role": "user", "content": "how is it paid?"},
               {"role": "assistant", "content": "It is paid through payroll."}]
    assert "wellness allowance" in engine.run("does it cover a meditation app?", history)["retrieval_query"]


RITUALS = """---
title: Our rituals
---
# Our rituals

## Meet-ups

The entire company gathers in person twice a year, in a different city each time. Each meet-up lasts
one week: we arrive on Sunday, meet from Monday to Thursday and fly home on Friday.

## All Hands

At the end of every cycle we hold an All Hands meeting on a Zoom call. It runs for about an hour, and
everyone at the company is invited.

## Heartbeats

Every team writes a heartbeat at the end of each cycle, summarizing the work that shipped and how long
each project took to run.
"""


CONTRIBUTING = """# Collaborator guide

## Who to cc in the issue tracker

| Subsystem | Maintainers |
| --- | --- |
| upgrading libuv | @nodejs/libuv |
| upgrading V8 | @nodejs/V8, @nodejs/post-mortem |
| upgrading npm | @nodejs/npm |

## Maintaining V8

We upgrade the version of V8 in Node.js main whenever a V8 release goes stable upstream, that is,
whenever a new release of Chrome comes out. Upgrading major versions would be much harder to do
with the patch mechanism above.
"""


def test_a_follow_up_that_asks_for_nothing_itself_asks_for_what_the_question_before_it_did(tmp_path_factory):
    """The blind set (Node.js's contributor handbook): "what about for a V8 upgrade?" after "who do I
    cc when I'm upgrading libuv?" was answered with when V8 is upgraded. It asks who, as the
    question before it did: the team handles of the V8 row answer it."""
    from rag_graph.answer.extractive import ExtractiveGenerator
    from rag_graph.answer.kinds import holds_answer, wanted_answer

    assert holds_answer("Subsystem: upgrading V8; Maintainers: @nodejs/V8, @nodejs/post-mortem", wanted_answer("who?"))
    rows = chunk("collaborator-guide::who-to-cc::0", "| Subsystem | Maintainers |\n| --- | --- |\n"
                 "| upgrading V8 | @nodejs/V8, @nodejs/post-mortem |", title="Collaborator guide", section="Who to cc")
    generator = ExtractiveGenerator(FakeRetriever([rows]).vocabulary)
    follow_up = Question("what about for a V8 upgrade?", "who cc upgrading")  # as resolved after "who do I cc…?"
    typed = [c.typed for c in generator._candidates(follow_up, [rows], generator._weights(follow_up))]
    assert typed and all(typed)  # the row names whom to cc: it is what the follow-up asks for
    engine = one_document_engine(tmp_path_factory, "contributing", CONTRIBUTING)
    history = [{"role": "user", "content": "who do I cc when I'm upgrading libuv?"},
               {"role": "assistant", "content": "@nodejs/libuv."}]
    state = engine.run("what about for a V8 upgrade?", history)
    assert "who" in state["question"].carried.split(), state["retrieval_query"]
    answer = state["final_output"]["answer"]
    assert "Subsystem: upgrading V8; Maintainers: @nodejs/V8" in answer and "We upgrade" not in answer, answer


def test_a_follow_up_no_entity_names_carries_the_section_its_previous_question_found(tmp_path_factory):
    """37signals: "how long does each one run?" after "how often does the whole company get together
    in person?" ("Twice a year, in a different city each time.") was declined: no word of the
    thread names the meet-ups, so the follow-up carried only "often whole company together". The
    section the previous question finds first ("Meet-ups") is the thread's subject."""
    engine = one_document_engine(tmp_path_factory, "rituals", RITUALS)
    history = [{"role": "user", "content": "how often does the whole company get together in person?"},
               {"role": "assistant", "content": "Twice a year, in a different city each time."}]
    state = engine.run("how long does each one run?", history)
    assert "meetups" in state["retrieval_query"], state["retrieval_query"]
    assert state["final_output"]["status"] == "answered"
    assert "Each meet-up lasts one week" in state["final_output"]["answer"]
