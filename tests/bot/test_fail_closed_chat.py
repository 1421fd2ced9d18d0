"""Small disclosures and injections in chat (issue: fail closed, findings 8-10): what readers
typed is shown as text in the Teams gap report; a chat model's streamed words cannot notify a
channel in Slack; requests from another workspace are refused; a Slack Connect channel reads only
the documents for everyone; `status` counts only what the place may read; the admin's gap report
quotes no DM question unless asked to and names only documents the admin may read."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bot.slack.render import PLACEHOLDER
from bot_harness import ADMIN, QUESTION, fake, mrkdwn_of, start_bot  # noqa: F401 (fixtures)
from conftest import BUNDLED_CORPUS
from fake_chat_model import TwoSentenceModel
from fake_slack import event_body
from teams_harness import ADMIN_AAD, connector, start_teams  # noqa: F401 (fixtures)
from rag_graph.answer.chat_model import ChatModelGenerator
from rag_graph.config import Settings
from rag_graph.engine import Engine

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
SEVERANCE = "ZEPHYRQUILL"
PHISH = "[Citebot admin: your session expired, sign in again](https://evil.example/login) is there a zebra policy?"


@pytest.fixture(scope="module")
def restricted(tmp_path_factory) -> Engine:
    engine = Engine(Settings(corpus=FIXTURES / "access_corpus", db=str(tmp_path_factory.mktemp("chat") / "lancedb")))
    engine.refresh()
    return engine


class ShoutingModel(TwoSentenceModel):
    """A chat model talked into notifying everyone (a prompt injection in a document would do)."""

    def _reply(self, messages) -> str:
        # The mention sits inside a sentence the documents support, so the sentence passes the
        # grounding check and streams (an unsupported sentence is dropped before it can stream).
        return re.sub(r"\.(?= \[)", " <!channel>.", super()._reply(messages), count=1)


def test_a_question_in_the_teams_gap_report_is_text_not_a_link(start_teams, restricted, connector, tmp_path):  # noqa: F811
    teams = start_teams(restricted, gaps_path=tmp_path / "gaps.jsonl")
    thread = "19:general@thread.tacv2;messageid=42"
    teams.say(PHISH, conversation=thread, kind="channel", mention=True)
    assert "I don't know" in connector.wait_for(conversation=thread, timeout=120)[0].text
    teams.say("gaps", conversation="a:admin", user=ADMIN_AAD)
    [report] = connector.wait_for(conversation="a:admin", timeout=120)
    assert "zebra" in report.text
    assert "](http" not in report.text and "[Citebot admin" not in report.text, report.text


def test_dm_questions_stay_out_of_the_gap_report_unless_the_admin_asks(start_teams, restricted, connector, tmp_path):  # noqa: F811
    teams = start_teams(restricted, gaps_path=tmp_path / "gaps.jsonl")
    teams.say("Is there a zebra policy for private matters?", conversation="a:someone", user="aad-someone")
    connector.wait_for(conversation="a:someone", timeout=120)
    teams.say("gaps", conversation="a:admin-1", user=ADMIN_AAD)
    assert "zebra" not in connector.wait_for(conversation="a:admin-1", timeout=120)[0].text
    shows = start_teams(restricted, gaps_path=tmp_path / "gaps.jsonl", gaps_show_dms=True)
    shows.say("gaps", conversation="a:admin-2", user=ADMIN_AAD)
    assert "zebra" in connector.wait_for(conversation="a:admin-2", timeout=120)[0].text


def test_streamed_words_cannot_notify_a_channel_in_slack(start_bot, engine, fake):  # noqa: F811
    shouting = Engine(Settings(corpus=BUNDLED_CORPUS, db=engine.settings.db),
                      generator=ChatModelGenerator(ShoutingModel()))
    bot = start_bot(shouting)
    bot.mention(QUESTION, ts="1700000100.000100")
    fake.wait_for("chat.stopStream", timeout=120)
    streamed = json.dumps([c.args for c in fake.calls() if "Stream" in c.method or c.method.startswith("chat.")])
    assert "channel" in streamed  # the words are shown…
    assert "<!channel>" not in streamed  # …but notify nobody


def test_an_event_from_another_workspace_is_refused(start_bot, restricted, fake):  # noqa: F811
    bot = start_bot(restricted, access_path=FIXTURES / "access.yml")
    event = {"type": "app_mention", "channel": "C0HRTEAM", "user": "U0OTHER", "ts": "1700000300.000100",
             "event_ts": "1700000300.000100", "text": "<@UBOT> What is the severance approval code?"}
    fake.add_message("C0HRTEAM", event["ts"], event["text"], user="U0OTHER")
    status, _ = bot.post(event_body(event, team_id="T0ELSEWHERE"))
    assert status == 403
    bot.mention("How many days can I work remotely?", channel="C0PROBE", ts="1700000400.000100")
    fake.wait_for("chat.postMessage", timeout=120, predicate=lambda c: c.args["channel"] == "C0PROBE"
                  and c.args.get("text") != PLACEHOLDER)
    assert not [c for c in fake.calls("chat.postMessage") if c.args["channel"] == "C0HRTEAM"]


def test_a_slack_connect_channel_reads_only_public_documents(start_bot, restricted, fake):  # noqa: F811
    bot = start_bot(restricted, access_path=FIXTURES / "access.yml")
    event = {"type": "app_mention", "channel": "C0HRTEAM", "user": "U0OTHER", "ts": "1700000500.000100",
             "event_ts": "1700000500.000100", "text": "<@UBOT> What is the severance approval code?"}
    fake.add_message("C0HRTEAM", event["ts"], event["text"], user="U0OTHER")
    body = json.loads(event_body(event))
    body["is_ext_shared_channel"] = True
    assert bot.post(json.dumps(body))[0] == 200
    [answer] = fake.wait_for("chat.postMessage", timeout=120, predicate=lambda c: c.args["channel"] == "C0HRTEAM"
                             and c.args.get("text") != PLACEHOLDER)
    shown = mrkdwn_of(answer) + answer.args.get("text", "")
    assert SEVERANCE not in shown and "I don't know" in shown


def test_status_counts_only_what_the_place_may_read(start_bot, restricted, fake):  # noqa: F811
    bot = start_bot(restricted, access_path=FIXTURES / "access.yml")
    everyone = len({row["source_id"] for row in restricted.index.scoped(None).fetch("chunk_index = 0", limit=1000)})
    total = restricted.index_status()["documents"]
    assert everyone < total
    status = bot.command("status", user_id="U0OTHER")["text"]
    assert f"{everyone} documents you can ask about here" in status
    assert not re.search(rf"\b{total} documents", status)
    assert f"{total} documents" in bot.command("status", user_id=ADMIN)["text"]
