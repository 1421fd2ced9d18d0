"""A 👎 asks why (wrong, outdated, incomplete, not what I asked) and for an optional comment, and
offers "Ask an expert" where the place has experts: end to end through the Bolt app against
FakeSlack, down to what `citebot gaps` prints."""
from __future__ import annotations

import json

import yaml

from bot.cli import main as cli_main
from bot.feedback import FeedbackLog
from bot.gaps import GapLog
from bot_harness import QUESTION, answers, blocks_of, fake, start_bot  # noqa: F401 (fixtures)

HELP, EXPERTS = "C0HELP", "C0EXPERTS"


def test_a_thumbs_down_records_its_reason_and_comment_and_can_ask_an_expert(start_bot, fake, engine, tmp_path,
                                                                            capsys, monkeypatch):
    access = tmp_path / "access.yml"
    access.write_text(yaml.safe_dump({"groups": {"people-ops": {"slack_users": ["UEXPERT"]}},
                                      "channels": {HELP: {"experts": {"channel": EXPERTS, "group": "people-ops"}}}}))
    bot = start_bot(engine, access_path=access, gaps_path=tmp_path / "gaps.jsonl")
    root = "1700005000.000100"
    bot.mention(QUESTION, channel=HELP, ts=root, user="U1")
    answer = answers(fake)[0]
    block = blocks_of(answer)[-1]
    element = block["elements"][0]
    [message] = [m for m in fake.thread(HELP, root) if m.get("bot_id")]
    envelope = {"user": {"id": "U1"}, "channel": {"id": HELP}, "message": message,
                "container": {"type": "message", "channel_id": HELP, "message_ts": message["ts"]}}
    assert bot.click({**envelope, "actions": [{"type": "feedback_buttons", "action_id": element["action_id"],
                                               "block_id": block["block_id"],
                                               "value": element["negative_button"]["value"]}]}) == 200
    [why] = fake.wait_for("chat.postEphemeral")
    offered = {e["action_id"]: e for b in blocks_of(why) if b["type"] == "actions" for e in b["elements"]}
    assert set(offered) == {"feedback_reason_wrong", "feedback_reason_outdated", "feedback_reason_incomplete",
                            "feedback_reason_not_asked", "escalate"}
    ref = json.loads(offered["feedback_reason_outdated"]["value"])["ref"]
    ephemeral = {"user": {"id": "U1"}, "channel": {"id": HELP},
                 "container": {"type": "message", "channel_id": HELP, "is_ephemeral": True, "thread_ts": root}}

    def act(action_id: str, value: str, block_id: str = "b") -> None:
        assert bot.click({**ephemeral, "actions": [{"action_id": action_id, "value": value, "block_id": block_id,
                                                    "type": "button"}]}) == 200

    act("feedback_reason_outdated", offered["feedback_reason_outdated"]["value"])
    act("feedback_comment", "The policy changed in March", block_id=f"comment|{ref}")
    fake.wait_for("chat.postEphemeral", count=3)
    [vote] = FeedbackLog(bot.settings.feedback_path).read()
    assert (vote["vote"], vote["reason"], vote["comment"]) == ("not_helpful", "outdated", "The policy changed in March")
    [gap] = GapLog(tmp_path / "gaps.jsonl").read()  # the vote's record, updated in place
    assert (gap["reason"], gap["comment"], gap["question"]) == ("outdated", "The policy changed in March", QUESTION)

    act("escalate", offered["escalate"]["value"])
    [post] = fake.wait_for("chat.postMessage", predicate=lambda c: c.args.get("channel") == EXPERTS)
    assert "<@U1>" in json.dumps(post.args) and "work remotely" in json.dumps(post.args)

    for name, value in {"CITEBOT_GAPS": str(tmp_path / "gaps.jsonl"), "CITEBOT_DB": engine.settings.db,
                        "CITEBOT_CORPUS": str(engine.settings.corpus)}.items():
        monkeypatch.setenv(name, value)
    capsys.readouterr()
    assert cli_main(["gaps"]) == 0
    report = capsys.readouterr().out
    assert "why unhelpful: outdated ×1" in report and "The policy changed in March" in report
