"""From "I don't know" to a verified answer, end to end through signed requests to the Bolt app
against FakeSlack: help channels answered without a mention, "Ask an expert" (once, however many
clicks), the expert's reply relayed, "Save as verified answer" (refused outside the expert group),
the verified answer cited with its mark only in its audience, and its expiry."""
from __future__ import annotations

import json
from datetime import date, timedelta

import pytest
import yaml

from bot.cli import main as cli_main
from bot_harness import QUESTION, answers, blocks_of, fake, mrkdwn_of, own_engine, quiet_for, start_bot  # noqa: F401

HELP, HR, EXPERTS, GENERAL = "C0HELP", "C0HR", "C0EXPERTS", "C0GENERAL"
EXPERT, OUTSIDER, ASKER = "UEXPERT", "UOUTSIDER", "UASKER"
UNANSWERABLE = "Does the company offer a company car or lease scheme?"
EXPERT_ANSWER = ("Yes: employees can lease a company car through the Fleetwise lease scheme "
                 "after six months of employment.")


@pytest.fixture
def access_file(tmp_path):
    path = tmp_path / "access.yml"
    path.write_text(yaml.safe_dump({
        "groups": {"people-ops": {"slack_users": [EXPERT]}},
        "channels": {HELP: {"answer": "all", "experts": {"channel": EXPERTS, "group": "people-ops"}},
                     HR: {"groups": ["people-ops"], "experts": {"channel": EXPERTS, "group": "people-ops"}}}}))
    return path


def button(call, action_id: str) -> dict:
    found = [e for b in blocks_of(call) if b["type"] == "actions" for e in b["elements"] if e["action_id"] == action_id]
    assert found, f"no {action_id} button in {blocks_of(call)}"
    return found[0]


def click(bot, user: str, channel: str, message: dict, element: dict) -> None:
    payload = {"user": {"id": user}, "channel": {"id": channel}, "container": {"type": "message", "channel_id": channel},
               "message": message, "actions": [{"action_id": element["action_id"], "value": element["value"],
                                                "type": "button", "block_id": "b"}]}
    assert bot.click(payload) == 200


def posted_in(fake, channel: str, count: int = 1, timeout: float = 60) -> list:
    return fake.wait_for("chat.postMessage", count=count, timeout=timeout,
                         predicate=lambda c: c.args.get("channel") == channel and "Looking through" not in c.args.get("text", ""))


def test_a_help_channel_answers_confident_questions_without_a_mention_and_nothing_else(start_bot, fake, engine,
                                                                                       access_file):
    bot = start_bot(engine, access_path=access_file)
    bot.say(QUESTION, channel=HELP, ts="1700001000.000100")
    [answer] = answers(fake)
    assert answer.args["thread_ts"] == "1700001000.000100" and "3 days a week" in mrkdwn_of(answer)
    bot.say("thanks!", channel=HELP, ts="1700001002.000100")  # small talk
    bot.say("who's coming to the party tonight?", channel=HELP, ts="1700001003.000100")  # unanswerable
    bot.say("the build is green again", channel=HELP, ts="1700001004.000100")  # not a question
    bot.say("can someone review my PR?", channel=HELP, ts="1700001007.000100")  # answered at 0.63 only
    bot.say(QUESTION, channel=GENERAL, ts="1700001005.000100")  # not a help channel: needs a mention
    assert [c.args.get("thread_ts") for c in quiet_for(bot) if c.method == "chat.postMessage"] == ["1700001000.000100"]
    assert not fake.calls("reactions.add") and not fake.calls("assistant.threads.setStatus")

    bot.say("what about contractors?", channel=HELP, ts="1700001006.000100", thread_ts="1700001000.000100")
    follow_up = answers(fake, count=2)[-1]  # a follow-up in the thread, as in any answered thread
    assert follow_up.args["thread_ts"] == "1700001000.000100"


def test_an_unanswered_question_reaches_the_experts_once_and_their_answer_becomes_verified_knowledge(
        start_bot, fake, own_engine, access_file, tmp_path, capsys):
    fake.users[EXPERT]["real_name"] = "Dana Expert"
    bot = start_bot(own_engine, access_path=access_file, gaps_path=tmp_path / "gaps.jsonl",
                    corpus=own_engine.settings.corpus)
    root = "1700002000.000100"
    bot.mention(UNANSWERABLE, channel=HR, ts=root, user=ASKER)
    [dont_know] = posted_in(fake, HR)
    assert "I don't know" in dont_know.args["text"]
    escalate = button(dont_know, "escalate")
    reply = {"ts": dont_know.args.get("ts") or "1700002000.000200", "thread_ts": root, "user": "UBOT"}

    click(bot, ASKER, HR, reply, escalate)
    click(bot, OUTSIDER, HR, reply, escalate)  # a second click: no second escalation
    [post] = posted_in(fake, EXPERTS)
    shown = mrkdwn_of(post)
    assert f"<@{ASKER}>" in shown and "car" in shown and "What's missing:" in shown
    assert f"https://fake-team.slack.com/archives/{HR}/p{root.replace('.', '')}" in shown  # the thread
    told = posted_in(fake, HR, count=2)[-1]
    assert told.args["thread_ts"] == root and "people-ops experts" in told.args["text"] and f"<#{EXPERTS}>" in told.args["text"]
    [already] = fake.wait_for("chat.postEphemeral", predicate=lambda c: c.args["user"] == OUTSIDER)
    assert "asked already" in already.args["text"]
    [experts_post] = fake.history(EXPERTS)
    experts_ts = experts_post["ts"]

    bot.say(EXPERT_ANSWER, channel=EXPERTS, ts="1700002100.000100", thread_ts=experts_ts, user=EXPERT)
    relayed = posted_in(fake, HR, count=3)[-1]
    assert relayed.args["thread_ts"] == root and f"<@{EXPERT}>" in mrkdwn_of(relayed) and "Fleetwise" in mrkdwn_of(relayed)
    save = button(relayed, "save_answer")
    relayed_message = {"ts": "x", "thread_ts": root}

    click(bot, OUTSIDER, HR, relayed_message, save)  # not in people-ops, not an admin
    refused = fake.wait_for("chat.postEphemeral", count=2, predicate=lambda c: c.args["user"] == OUTSIDER)[-1]
    assert "Only the people-ops experts" in refused.args["text"]
    folder = own_engine.settings.corpus / "verified"
    assert not folder.exists()

    click(bot, EXPERT, HR, relayed_message, save)
    saved = posted_in(fake, HR, count=4, timeout=120)[-1]
    assert "saved" in saved.args["text"] and f"<@{EXPERT}>" in saved.args["text"]
    [document] = folder.glob("*.md")
    meta = yaml.safe_load(document.read_text().split("---")[1])
    assert meta["title"] == UNANSWERABLE and meta["verified_by"] == "Dana Expert" and meta["audience"] == ["people-ops"]
    assert meta["review_by"] == (date.today() + timedelta(days=180)).isoformat() and HR in meta["url"]

    # The next person in the same place gets the expert's answer, cited, with its mark.
    bot.mention(UNANSWERABLE, channel=HR, ts="1700003000.000100", user="UNEXT")
    again = posted_in(fake, HR, count=5)[-1]
    assert "Fleetwise" in mrkdwn_of(again), mrkdwn_of(again)
    assert f"Verified by Dana Expert on {date.today().isoformat()}" in mrkdwn_of(again)
    # A place outside the answer's audience is never answered from it.
    bot.mention(UNANSWERABLE, channel=GENERAL, ts="1700003000.000200", user="UNEXT")
    elsewhere = posted_in(fake, GENERAL)[-1]
    assert "Fleetwise" not in json.dumps(elsewhere.args) and "I don't know" in elsewhere.args["text"]

    # Past its review date it loses the mark and is listed as due for review.
    document.write_text(document.read_text().replace(f"review_by: '{meta['review_by']}'",
                                                     f"review_by: '{(date.today() - timedelta(days=1)).isoformat()}'"))
    bot.mention(UNANSWERABLE, channel=HR, ts="1700004000.000100", user="UNEXT")
    expired = posted_in(fake, HR, count=6)[-1]
    assert "Fleetwise" in mrkdwn_of(expired) and "Verified by" not in mrkdwn_of(expired)
    capsys.readouterr()
    env = {"CITEBOT_CORPUS": str(own_engine.settings.corpus), "CITEBOT_DB": own_engine.settings.db,
           "CITEBOT_GAPS": str(tmp_path / "gaps.jsonl")}
    with pytest.MonkeyPatch.context() as patch:
        for name, value in env.items():
            patch.setenv(name, value)
        assert cli_main(["gaps"]) == 0
    report = capsys.readouterr().out
    assert "1 verified answer(s) due for review" in report and UNANSWERABLE in report and "Dana Expert" in report

