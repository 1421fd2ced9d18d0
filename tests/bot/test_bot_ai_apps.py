"""Slack's AI-app surface end to end against FakeSlack: the status fallback, the Messages tab's
suggested prompts, streamed answers from a chat model, and links for documents without a url."""
import json
import time

import pytest

from bot.reply import HEDGE
from bot.slack.render import PLACEHOLDER, answer_body, render_answer
from bot_harness import QUESTION, answers, blocks_of, bot, fake, mrkdwn_of, start_bot  # noqa: F401 (fixtures)
from conftest import BUNDLED_CORPUS
from fake_chat_model import TwoSentenceModel
from rag_graph.config import Settings
from rag_graph.engine import Engine
from rag_graph.answer.chat_model import ChatModelGenerator
from rag_graph.scoring import doubt, learned

ROOT_TS = "1700000100.000100"


def bot_messages(fake, channel, thread_ts):
    return [m for m in fake.thread(channel, thread_ts) if m.get("bot_id") == "BBOT"]


def sources(blocks):
    """The mrkdwn of the closing context blocks (note and sources), as a reader sees them."""
    return [e["text"] for b in blocks if b["type"] == "context" for e in b["elements"]]


@pytest.fixture(scope="module")
def streaming_engine(engine):
    """The session index answered by a chat model that streams its tokens."""
    return Engine(Settings(corpus=BUNDLED_CORPUS, db=engine.settings.db),
                  generator=ChatModelGenerator(TwoSentenceModel()))


def test_when_the_status_is_refused_a_placeholder_is_edited_into_the_answer(bot, fake):
    fake.fail_next("assistant.threads.setStatus", error="missing_scope", status=200, retry_after=None)
    bot.mention(QUESTION, ts=ROOT_TS)
    update = fake.wait_for("chat.update", timeout=30)[0]
    [placeholder] = fake.calls("chat.postMessage")
    assert placeholder.args["text"] == PLACEHOLDER and placeholder.args["thread_ts"] == ROOT_TS
    [reply] = bot_messages(fake, "C1", ROOT_TS)
    assert reply["ts"] == update.args["ts"] and "3 days a week" in mrkdwn_of(update)


def test_opening_the_messages_tab_suggests_questions_from_the_corpus_and_a_question_there_is_answered(
        bot, fake, engine):
    thread = {"user_id": "U1", "channel_id": "D1", "thread_ts": "1700000600.000100",
              "context": {"channel_id": "C1", "team_id": "T0001", "enterprise_id": None}}
    assert bot.event({"type": "assistant_thread_started", "assistant_thread": thread,
                      "event_ts": "1700000600.000200"}) == 200
    [call] = fake.wait_for("assistant.threads.setSuggestedPrompts")
    prompts = fake.suggested_prompts[("D1", "1700000600.000100")]["prompts"]
    assert 1 <= len(prompts) <= 4 and prompts == engine.suggested_prompts()
    titles = {row["title"] for row in engine.index.fetch("chunk_index = 0", limit=10_000)}
    sections = {row["section"].split(" › ")[0] for row in engine.index.fetch("chunk_index = 0", limit=10_000)}
    for prompt in prompts:  # each names a document of the corpus and one of its sections
        assert prompt["title"] in sections and any(title in prompt["message"] for title in titles)

    # The suggestion a newcomer clicks arrives as a DM in that thread and is answered there.
    bot.say(prompts[0]["message"], channel="D1", channel_type="im", ts="1700000600.000300",
            thread_ts="1700000600.000100")
    [answer] = answers(fake)
    assert answer.args["channel"] == "D1" and answer.args["thread_ts"] == "1700000600.000100"
    assert "I don't know" not in answer.args["text"] and "Sources" in mrkdwn_of(answer)
    [status] = fake.calls("assistant.threads.setStatus")
    assert status.args["thread_ts"] == "1700000600.000100"


def test_a_chat_model_answer_is_streamed_and_ends_equal_to_the_answer_given_whole(start_bot, streaming_engine, fake):
    whole = streaming_engine.ask(QUESTION)  # no stream: the model's own invoke
    assert whole["status"] == "answered"
    bot = start_bot(streaming_engine)
    posted = time.time()
    bot.mention(QUESTION, ts=ROOT_TS)
    stop = fake.wait_for("chat.stopStream", timeout=60)[0]
    start = fake.calls("chat.startStream")[0]
    status = fake.calls("assistant.threads.setStatus")[0]
    assert status.time <= start.time <= stop.time
    assert start.args["recipient_user_id"] == "U1" and start.args["thread_ts"] == ROOT_TS

    [reply] = bot_messages(fake, "C1", ROOT_TS)  # one message, nothing posted whole
    assert not fake.calls("chat.postMessage") and not fake.calls("chat.update")
    assert reply["text"] == answer_body(whole)
    expected = render_answer(whole, ref="any", question=QUESTION)["blocks"]
    assert sources(reply["blocks"]) == sources(expected) and sources(expected)  # the same citations
    assert reply["blocks"][-1]["type"] == "context_actions"
    print(f"\nstreamed: event -> status {status.time - posted:.3f} s, -> first words {start.time - posted:.3f} s, "
          f"-> stream stopped {stop.time - posted:.3f} s")


@pytest.mark.parametrize("method, error", [("chat.startStream", "missing_scope"),
                                           ("chat.stopStream", "message_not_in_streaming_state")],
                         ids=["stream refused", "stream expired"])
def test_when_streaming_fails_the_full_answer_still_arrives_once(start_bot, streaming_engine, fake, method, error):
    whole = render_answer(streaming_engine.ask(QUESTION), ref="any", question=QUESTION)
    fake.fail_next(method, error=error, status=200, retry_after=None)
    bot = start_bot(streaming_engine)
    bot.mention(QUESTION, ts=ROOT_TS)
    delivered = (fake.wait_for("chat.update", timeout=60) if method == "chat.stopStream" else answers(fake, timeout=60))[0]
    [reply] = bot_messages(fake, "C1", ROOT_TS)
    assert reply["text"] == delivered.args["text"] == whole["text"]
    assert sources(blocks_of(delivered)) == sources(whole["blocks"])


def test_citations_link_through_citebot_source_url(start_bot, engine, fake):
    linked = Engine(Settings(corpus=BUNDLED_CORPUS, db=engine.settings.db,
                             source_url="https://github.com/acme/handbook/blob/main/{path}"))
    bot = start_bot(linked)
    bot.mention("What is the EcoPass?")
    shown = mrkdwn_of(answers(fake)[0])
    assert "<https://github.com/acme/handbook/blob/main/reference/glossary.md#af|Orrinfold Glossary › A–F>" in shown


def test_a_hedged_answer_that_streamed_is_edited_into_the_message_with_the_hedge_first(
        start_bot, streaming_engine, fake, tmp_path, monkeypatch):
    """The flow knows it doubts an answer only once it is written, after its words streamed:
    the stream is not completed but edited into the message, so the hedge still comes first.
    (A doubt threshold every answer passes stands in for an answer the model doubts.)"""
    for shipped in learned.MODEL_DIR.glob("*.json"):
        (tmp_path / shipped.name).write_text(shipped.read_text())
    data = json.loads((tmp_path / doubt.MODEL_FILE).read_text())
    (tmp_path / doubt.MODEL_FILE).write_text(json.dumps({**data, "threshold": 1e-6}))
    monkeypatch.setenv(learned.MODEL_ENV, str(tmp_path))
    whole = streaming_engine.ask(QUESTION)
    assert whole["status"] == "answered" and whole["hedged"]
    bot = start_bot(streaming_engine)
    bot.mention(QUESTION, ts=ROOT_TS)
    [update] = fake.wait_for("chat.update", timeout=60)
    assert fake.calls("chat.startStream") and fake.calls("chat.stopStream")  # its words streamed first
    [reply] = bot_messages(fake, "C1", ROOT_TS)  # one message: the stream, edited
    assert reply["ts"] == update.args["ts"] and reply["text"].startswith(HEDGE)
    assert reply["blocks"][0]["text"]["text"] == f"_{HEDGE}_"
    assert answer_body(whole).split(". ")[0] in mrkdwn_of(update)  # the answer's words, after the hedge
    assert sources(reply["blocks"]) == sources(render_answer(whole, ref="any")["blocks"])  # the same citations
