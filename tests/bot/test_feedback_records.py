"""Feedback records (issue: fail closed, finding 6): Slack and Teams write one file through stores
that share one lock, so concurrent votes are neither lost nor damaged; a vote names its voter only
as the gap log's salted hash and expires with the gap log's retention."""
from __future__ import annotations

import json
import random
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta, timezone

from bot.feedback import FeedbackLog
from bot_harness import QUESTION, answers, blocks_of, bot, fake, start_bot  # noqa: F401 (fixtures)
from test_bot_feedback import click

VOTES = 400
CHANGED_MIND = 100  # votes whose voter clicks again: the record is rewritten in place


def test_400_concurrent_votes_from_both_platforms_give_400_intact_records(tmp_path):
    path = tmp_path / "feedback.jsonl"
    slack, teams = FeedbackLog(path), FeedbackLog(path)  # as `citebot serve` holds them: one per platform
    start = threading.Barrier(16)
    waited = threading.local()

    def vote(n: int) -> None:
        if not getattr(waited, "done", False):  # every worker starts at once
            start.wait()
            waited.done = True
        log = slack if n % 2 else teams
        record = {"platform": "slack" if n % 2 else "teams", "ref": f"r{n:04d}", "user": f"U{n % 37}",
                  "vote": "helpful", "question": f"question {n} " + "x" * random.randint(0, 3000)}
        log.append(record)
        if n < CHANGED_MIND:
            log.append({**record, "vote": "not_helpful"})

    with ThreadPoolExecutor(16) as pool:
        list(pool.map(vote, range(VOTES)))  # re-raises any error a writer met (FileNotFoundError was one)

    lines = path.read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]  # every line intact
    assert len(records) == VOTES
    assert sorted(r["ref"] for r in records) == [f"r{n:04d}" for n in range(VOTES)]
    assert all(r["vote"] == ("not_helpful" if int(r["ref"][1:]) < CHANGED_MIND else "helpful") for r in records)
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_a_vote_names_no_voter_and_old_votes_expire(bot, fake):  # noqa: F811
    path = bot.settings.feedback_path
    path.parent.mkdir(parents=True, exist_ok=True)
    old = (datetime.now(timezone.utc) - timedelta(days=bot.settings.gap_retention_days + 1)).isoformat()
    path.write_text(json.dumps({"time": old, "ref": "old1", "user": "h", "vote": "helpful"}) + "\n")
    bot.mention(QUESTION, ts="1700000100.000100")
    block = blocks_of(answers(fake)[0])[-1]
    [message] = [m for m in fake.thread("C1", "1700000100.000100") if m.get("bot_id")]
    assert click(bot, message, block, "not_helpful", user="U7SECRETID") == 200
    thanks = fake.wait_for("chat.postEphemeral")[0]
    assert thanks.args["user"] == "U7SECRETID"  # the voter is still thanked in person

    stored = path.read_text(encoding="utf-8")
    assert "U7SECRETID" not in stored
    records = [json.loads(line) for line in stored.splitlines()]
    assert [r["ref"] for r in records if r["ref"] == "old1"] == []  # past the gap log's retention
    [vote] = records
    assert vote["vote"] == "not_helpful" and len(vote["user"]) == 16
