"""State replicas share through a real Redis server (CITEBOT_REDIS_URL): seen events, the Teams
conversation memory, the reload lock and feedback; and what a replica does while Redis is down.
Each SharedState stands for one replica (its own connection pool, its own in-process fallback)."""
from __future__ import annotations

import pytest
import redis

from bot.admin import Admin
from bot.feedback import FeedbackLog
from bot.shared import SharedState


@pytest.fixture
def url(redis_server) -> str:
    redis.Redis.from_url(redis_server.url).flushdb()
    return redis_server.url


@pytest.fixture
def down(redis_server):
    """Redis stops for the test, and is back afterwards."""
    redis_server.stop()
    yield
    redis_server.start()


def test_an_event_is_taken_by_one_replica_only_and_the_mark_expires(url):
    a, b = SharedState(url).seen(ttl=600), SharedState(url).seen(ttl=600)
    assert a.first_time(("event", "Ev1")) is True
    assert b.first_time(("event", "Ev1")) is False  # Slack's retry reached the other replica
    assert a.first_time(("event", "Ev1")) is False
    assert b.first_time(("event", "Ev2")) is True
    assert 0 < redis.Redis.from_url(url).ttl("citebot:seen:event:Ev1") <= 600


def test_a_teams_conversation_continues_on_another_replica(url):
    a, b = SharedState(url).memory(max_turns=2), SharedState(url).memory(max_turns=2)
    for n in range(3):
        a.add("conv-1", f"question {n}", f"answer {n}")
    assert [t["content"] for t in b.turns("conv-1")] == ["question 1", "answer 1", "question 2", "answer 2"]
    assert b.turns("conv-2") == []
    a.note_answer("act-9", {"ref": "r1", "status": "answered"})
    assert b.answer("act-9") == {"ref": "r1", "status": "answered"} and b.answer("act-0") is None


def test_feedback_lives_in_redis_one_record_per_person_and_answer_across_restarts(url, tmp_path):
    path = tmp_path / "feedback.jsonl"
    FeedbackLog(path, SharedState(url)).append({"ref": "r1", "user": "U1", "vote": "helpful"})
    FeedbackLog(path, SharedState(url)).append({"ref": "r1", "user": "U1", "vote": "not_helpful"})  # changed mind
    FeedbackLog(path, SharedState(url)).append({"ref": "r1", "user": "U2", "vote": "helpful"})
    restarted = FeedbackLog(path, SharedState(url)).read()
    assert sorted((r["user"], r["vote"]) for r in restarted) == [("U1", "not_helpful"), ("U2", "helpful")]
    assert not path.exists()  # nothing went to the local file


def test_one_reload_at_a_time_across_replicas(url):
    a, b = SharedState(url).reload_lock, SharedState(url).reload_lock
    assert a.acquire() is True
    assert b.acquire() is False and a.acquire() is False
    a.release()
    assert b.acquire() is True
    b.release()


def test_while_redis_is_down_a_replica_answers_with_its_own_state_and_says_so(url, down, tmp_path, engine):
    shared = SharedState(url)
    seen = shared.seen()
    assert seen.first_time(("event", "Ev1")) is True and seen.first_time(("event", "Ev1")) is False
    memory = shared.memory(max_turns=4)
    memory.add("conv", "q", "a")
    assert [t["content"] for t in memory.turns("conv")] == ["q", "a"]
    log = FeedbackLog(tmp_path / "feedback.jsonl", shared)
    log.append({"ref": "r1", "user": "U1", "vote": "helpful"})
    assert [r["vote"] for r in log.read()] == ["helpful"] and (tmp_path / "feedback.jsonl").exists()
    assert shared.reload_lock.acquire() is True  # this process's lock still holds it to one reload here
    assert shared.reload_lock.acquire() is False
    shared.reload_lock.release()
    status = Admin(engine.settings, engine, shared).status()
    assert "Redis unreachable since" in status and "in-process state" in status


def test_without_a_url_the_state_stays_in_process(tmp_path, engine):
    shared = SharedState(None)
    seen = shared.seen()
    assert seen.first_time("x") is True and seen.first_time("x") is False
    FeedbackLog(tmp_path / "feedback.jsonl", shared).append({"ref": "r1", "user": "U1", "vote": "helpful"})
    assert (tmp_path / "feedback.jsonl").exists()
    assert "in this process" in Admin(engine.settings, engine, shared).status()


def test_gap_records_and_the_asker_salt_are_shared_by_replicas_and_expire_there(url, tmp_path):
    from datetime import datetime, timedelta, timezone

    from bot.gaps import GapLog

    now = [datetime(2026, 12, 1, tzinfo=timezone.utc)]
    a, b = (GapLog(tmp_path / name / "gaps.jsonl", retention_days=30, clock=lambda: now[0],
                   shared=SharedState(url)) for name in ("a", "b"))
    unknown = {"status": "insufficient_context", "knowledge_gap": "Nothing covers “sabbatical”."}
    a.unanswered("slack", "C1", "U1", "Do we get a sabbatical?", unknown)
    b.unanswered("teams", "19:x", "U2", "Is there a sabbatical program?", unknown)
    assert sorted(r["question"] for r in a.read()) == sorted(r["question"] for r in b.read()) == [
        "Do we get a sabbatical?", "Is there a sabbatical program?"]
    assert a.asker("slack", "U1") == b.asker("slack", "U1")  # one person, one hash, on every replica
    assert not (tmp_path / "a" / "gaps.jsonl").exists()  # kept in Redis, not on a replica's disk

    now[0] += timedelta(days=31)
    b.unanswered("slack", "C1", "U3", "Are pets allowed?", unknown)
    assert [r["question"] for r in a.read()] == ["Are pets allowed?"]
    assert len(redis.Redis.from_url(url).hvals("citebot:gaps")) == 1  # the expired ones are deleted
