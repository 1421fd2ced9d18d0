"""Streaming in Teams, end to end: the real Agents SDK app answers activities posted to
/api/messages with the real engine and a chat model that writes slowly, and the fake Bot
Connector holds the bot to Teams' streaming contract (tests/fake_connector.py). In a personal
chat: an informative update, the grounded sentences with their markers, then one final message
that is the unstreamed answer itself; in channels and group chats, no stream at all."""
from __future__ import annotations

import logging
import re
import time

import pytest

from bot.teams.stream import INFORMING, INTERVAL
from bot_harness import QUESTION
from conftest import BUNDLED_CORPUS
from fake_chat_model import TwoSentenceModel
from teams_harness import ai_entity, connector, start_teams  # noqa: F401 (fixtures)
from rag_graph.answer.chat_model import ChatModelGenerator
from rag_graph.config import Settings
from rag_graph.engine import Engine

PERSONAL = "a:personal-1"
THREAD = "19:general@thread.tacv2;messageid=1700000100001"
EXPENSES = """---
title: Expenses
---
# Expenses

## Filing a report

File every expense report in the finance portal at https://portal.finance-internal.example/new within 30 days.
The shared test account of the finance portal uses the key sk-live-4f9a8b7c6d5e4f3a2b1c for its uploads.
Receipts over 75 dollars must be attached to every expense report you file.
Late expense reports are reviewed by the controller at the end of each month.
"""


def writing(db: str, corpus=BUNDLED_CORPUS, **model) -> Engine:
    """An index answered by a chat model that writes four cited sentences, a second apart."""
    return Engine(Settings(corpus=corpus, db=db),
                  generator=ChatModelGenerator(TwoSentenceModel(**{"sentences": 4, "pause": 1.0, **model})))


@pytest.fixture(scope="module")
def streaming(engine):
    return writing(engine.settings.db)


def streamed(connector, conversation: str = PERSONAL, refused: bool = False) -> list:
    return [s for s in connector.sent(conversation=conversation, refused=refused) if s.stream]


def shown(connector, conversation: str = PERSONAL) -> dict[str, str]:
    """What the asker reads: each message by its id, as last sent or edited (typing aside)."""
    messages: dict[str, str] = {}
    for s in connector.sent("message", conversation=conversation):
        messages[s.id] = s.text
    return messages


def test_a_personal_chat_streams_the_grounded_sentences_then_one_final_that_is_the_unstreamed_answer(
        start_teams, streaming, connector):
    teams = start_teams(streaming)
    teams.say(QUESTION)
    [final] = connector.wait_for("message", conversation=PERSONAL, timeout=120)
    informative, *updates, closing = streamed(connector)

    assert closing is final and not streamed(connector, refused=True)
    assert (informative.kind, informative.stream["streamType"], informative.stream["streamSequence"]) == \
        ("typing", "informative", 1)
    assert informative.text == INFORMING and "streamId" not in informative.stream
    stream_id = informative.id  # Teams named the stream in its 201
    assert len(updates) >= 2, [u.text for u in updates]  # sentences shown as they were written
    assert [u.stream["streamType"] for u in updates] == ["streaming"] * len(updates)
    assert [u.stream["streamSequence"] for u in updates] == list(range(2, len(updates) + 2))
    assert {u.stream["streamId"] for u in updates} == {stream_id}
    assert all(later.time - earlier.time >= INTERVAL - 0.1 for earlier, later in zip(updates, updates[1:]))
    assert re.fullmatch(r".+ \[1\]", updates[0].text)  # with the marker the answer gives it
    for earlier, later in zip([informative, *updates][1:], [*updates, final]):
        assert later.text.startswith(earlier.text)  # each holds what was shown before

    assert final.stream == {"type": "streaminfo", "streamType": "final", "streamId": stream_id}
    assert final.id == stream_id and shown(connector) == {stream_id: final.text}
    assert final.activity["channelData"]["feedbackLoop"] == {"type": "custom"}
    [citation] = ai_entity(final)["citation"]
    assert citation["appearance"]["name"] == "Employee Handbook 2025 › Remote Work"

    # The unstreamed answer to the same question, asked where Teams does not stream: the same message.
    teams.say(QUESTION, conversation=THREAD, kind="channel", mention=True)
    [unstreamed] = connector.wait_for("message", conversation=THREAD, timeout=120)
    without_stream = {**final.activity, "entities": [e for e in final.activity["entities"] if e != final.stream]}
    assert {k: v for k, v in without_stream.items() if k not in ("conversation", "replyToId")} == \
        {k: v for k, v in unstreamed.activity.items() if k not in ("conversation", "replyToId")}
    print(f"\nstreamed: {[u.text for u in updates]}\nfinal: {final.text}")


@pytest.mark.parametrize("kind, conversation", [("channel", THREAD), ("groupChat", "19:chat-1@thread.v2")])
def test_channels_and_group_chats_get_typing_then_one_message_and_no_stream(start_teams, streaming, connector,
                                                                            kind, conversation):
    teams = start_teams(streaming)
    teams.say(QUESTION, conversation=conversation, kind=kind, mention=True)
    [answer] = connector.wait_for("message", conversation=conversation, timeout=120)
    assert "[1]" in answer.text and not answer.stream
    assert connector.sent("typing", conversation=conversation)  # Teams' plain "typing…"
    assert not streamed(connector, conversation) and not streamed(connector, conversation, refused=True)


def test_an_update_teams_refuses_ends_the_updates_and_the_answer_still_comes_once(start_teams, streaming, connector):
    connector.fail_next(lambda method, activity: activity.get("type") == "typing"
                        and (activity.get("entities") or [{}])[0].get("streamType") == "streaming",
                        500, "InternalServerError", "The service is unavailable")
    teams = start_teams(streaming)
    teams.say(QUESTION)
    [final] = connector.wait_for("message", conversation=PERSONAL, timeout=120)
    [refused] = streamed(connector, refused=True)
    informative, *updates, closing = streamed(connector)
    assert refused.stream["streamType"] == "streaming" and updates == []  # nothing more after the refusal
    assert closing is final and final.stream["streamType"] == "final" and "[1]" in final.text
    assert shown(connector) == {informative.id: final.text}


def test_a_final_teams_refuses_is_edited_into_the_streamed_message_once(start_teams, streaming, connector):
    connector.fail_next(lambda method, activity: activity.get("type") == "message", 403, "ContentStreamNotAllowed",
                        "Content stream finished due to exceeded streaming time.")
    teams = start_teams(streaming)
    teams.say(QUESTION)
    [edit] = connector.wait_for("message", conversation=PERSONAL, timeout=120)
    [refused] = streamed(connector, refused=True)
    informative = streamed(connector)[0]
    assert refused.stream["streamType"] == "final"
    assert edit.method == "PUT" and edit.reply_to == informative.id and "[1]" in edit.text
    assert ai_entity(edit)["citation"] and not edit.stream
    assert shown(connector) == {informative.id: refused.activity["text"]}  # the answer, once


def test_a_stream_teams_will_not_start_gets_typing_and_the_answer_as_one_message(start_teams, streaming, connector):
    connector.fail_next(lambda method, activity: activity.get("type") == "typing", 403, "ContentStreamNotAllowed",
                        "Content stream is not allowed")
    teams = start_teams(streaming)
    teams.say(QUESTION)
    [answer] = connector.wait_for("message", conversation=PERSONAL, timeout=120)
    assert not answer.stream and "[1]" in answer.text and len(streamed(connector, refused=True)) == 1
    assert [s for s in connector.sent("typing", conversation=PERSONAL) if not s.stream]  # typing instead
    assert len(shown(connector)) == 1


def test_the_asker_pressing_stop_ends_the_answer(start_teams, streaming, connector, caplog):
    caplog.set_level(logging.INFO, logger="bot.answering")
    connector.fail_next(lambda method, activity: activity["conversation"]["id"] == PERSONAL
                        and (activity.get("entities") or [{}])[0].get("streamType") == "streaming",
                        403, "ContentStreamNotAllowed", "Content stream was cancelled by user.")
    teams = start_teams(streaming)
    teams.say(QUESTION)
    deadline = time.monotonic() + 120
    while not any(f" in {PERSONAL} with " in r.getMessage() for r in caplog.records):  # the turn is over
        assert time.monotonic() < deadline
        time.sleep(0.2)
    [stopped] = streamed(connector, refused=True)
    informative, = streamed(connector)
    assert stopped.stream["streamType"] == "streaming" and informative.stream["streamType"] == "informative"
    assert shown(connector) == {}  # Teams: a stopped answer is the asker's choice; nothing more is sent


def test_a_declined_answer_closes_the_stream_as_shown_and_is_edited_into_i_dont_know(start_teams, engine, connector,
                                                                                      tmp_path):
    declining = writing(engine.settings.db, tail="INSUFFICIENT_CONTEXT")
    teams = start_teams(declining)
    teams.say(QUESTION)
    [edit] = connector.wait_for("message", conversation=PERSONAL, timeout=120, predicate=lambda s: s.method == "PUT")
    informative, *updates, closing = streamed(connector)
    assert updates and closing.stream["streamType"] == "final" and closing.text == updates[-1].text
    assert edit.reply_to == informative.id and "I don't know" in edit.text
    assert not streamed(connector, refused=True) and shown(connector) == {informative.id: edit.text}


def test_the_stream_shows_only_what_the_answer_shows_links_and_secrets_removed(start_teams, connector, tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "expenses.md").write_text(EXPENSES)
    engine = writing(str(tmp_path / "lancedb"), corpus=corpus)
    engine.refresh()
    teams = start_teams(engine)
    teams.say("How do I file an expense report?")
    [final] = connector.wait_for("message", conversation=PERSONAL, timeout=120)
    updates = [s for s in streamed(connector) if s.stream["streamType"] == "streaming"]
    assert updates and "[link removed]" in updates[-1].text and "[redacted]" in updates[-1].text
    everything = " ".join(s.text for s in connector.sent(conversation=PERSONAL))
    assert "finance-internal" not in everything and "sk-live" not in everything
    assert final.text.startswith(updates[-1].text)
