"""The knowledge-gap log and `citebot gaps`: a seeded log of 56 records (unanswered questions in
five topics, worded differently, and negative votes), grouped with the real embedding model."""
from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from bot.cli import main
from bot.gaps import GapLog, parse_since, report_text, topics
from rag_graph.config import Settings
from rag_graph.engine import Engine

NOW = datetime(2026, 12, 3, 12, 0, tzinfo=timezone.utc)
# topic -> the ways people asked it; asked this many times in total, most asked first
SEEDED = {
    "contractor remote work": (14, ["Can contractors work remotely?", "Are contractors allowed to work from home?",
                                    "remote work rules for contractors", "Do freelancers get to work remotely?"]),
    "company car": (12, ["Does the company offer a company car?", "Is there a car lease scheme?",
                         "Can I get a company car?", "company car policy"]),
    "gym membership": (10, ["Do we get a gym membership?", "Is there a fitness allowance?",
                            "Does the company pay for the gym?"]),
    "pet policy": (8, ["Can I bring my dog to the office?", "Are pets allowed in the office?",
                       "office dog policy"]),
    "sabbatical": (6, ["Is there a sabbatical program?", "Can I take a sabbatical?",
                       "How long can a sabbatical be?"]),
}


def seeded_log(path, salt: str = "test-salt") -> GapLog:
    """56 records over 60 days: 50 unanswered questions, 6 negative votes on the sabbatical answer."""
    records, n = [], 0
    for topic, (count, wordings) in SEEDED.items():
        for i in range(count):
            records.append({"time": (NOW - timedelta(days=(n * 7) % 60, hours=i)).isoformat(timespec="seconds"),
                            "kind": "unanswered", "platform": "slack", "channel": "C0GENERAL",
                            "asker": f"asker-{i % 5}", "question": wordings[i % len(wordings)],
                            "knowledge_gap": f"Nothing in the knowledge base covers “{topic}”.",
                            "nearest": ["employee-handbook-2025", "benefits-overview"][: 1 + i % 2]})
            n += 1
    for i in range(6):
        records.append({"time": (NOW - timedelta(days=i)).isoformat(timespec="seconds"),
                        "kind": "negative_feedback", "platform": "teams", "channel": "a:1", "asker": "asker-9",
                        "question": "How long can a sabbatical be?", "knowledge_gap": None,
                        "nearest": ["leave-policy"], "comment": "It only covers unpaid leave" if i == 0 else ""})
    path.write_text("".join(json.dumps(r) + "\n" for r in sorted(records, key=lambda r: r["time"])))
    return GapLog(path, retention_days=90, salt=salt, clock=lambda: NOW)


@pytest.fixture(scope="module")
def embed(tmp_path_factory):
    """The model, reached as the bot reaches it: through an Engine (no index needed)."""
    return Engine(Settings(db=str(tmp_path_factory.mktemp("gaps") / "lancedb"))).embed


def test_similar_questions_become_topics_ranked_by_how_often_they_were_asked(tmp_path, embed):
    found = topics(seeded_log(tmp_path / "gaps.jsonl").read(), embed)
    assert [t["count"] for t in found] == [14, 12, 12, 10, 8]
    by_example = {example: t for t in found for example in t["examples"]}
    assert by_example["Can contractors work remotely?"]["count"] == 14
    sabbatical = by_example["Is there a sabbatical program?"]
    assert (sabbatical["unanswered"], sabbatical["negative_feedback"]) == (6, 6)
    assert sabbatical["comments"] == ["It only covers unpaid leave"]
    assert "leave-policy" in sabbatical["nearest_documents"]  # the document the unhelpful answer cited
    assert by_example["Can I bring my dog to the office?"]["nearest_documents"] == [
        "employee-handbook-2025", "benefits-overview"]
    assert found[0]["askers"] == 5


def test_since_narrows_and_retention_deletes_old_records(tmp_path):
    log = seeded_log(tmp_path / "gaps.jsonl")
    everything = log.read()
    assert len(everything) == 56
    assert len(log.read(parse_since("30d"))) == len([r for r in everything if r["time"] >= (NOW - timedelta(days=30)).isoformat()])
    short = GapLog(tmp_path / "gaps.jsonl", retention_days=30, salt="test-salt", clock=lambda: NOW)
    kept = short.read()
    assert 0 < len(kept) < 56
    short.unanswered("slack", "C1", "U1", "Is there a bike scheme?",
                     {"status": "insufficient_context", "knowledge_gap": "x", "retrieved_sources": ["a", "b", "c", "d"]})
    on_disk = [json.loads(line) for line in (tmp_path / "gaps.jsonl").read_text().splitlines()]
    assert len(on_disk) == len(kept) + 1  # the expired records are gone from the file itself
    assert on_disk[-1]["nearest"] == ["a", "b", "c"] and on_disk[-1]["asker"] != "U1"
    with pytest.raises(ValueError, match="--since must look like 30d"):
        parse_since("a month")


def test_askers_are_salted_hashes_and_answers_are_not_gaps(tmp_path):
    log = GapLog(tmp_path / "gaps.jsonl", clock=lambda: NOW)  # salt generated and kept beside the log
    assert log.asker("slack", "U1") == log.asker("slack", "U1") != log.asker("slack", "U2")
    assert (tmp_path / "gaps.jsonl.salt").stat().st_mode & 0o777 == 0o600
    again = GapLog(tmp_path / "gaps.jsonl", clock=lambda: NOW)
    assert again.asker("slack", "U1") == log.asker("slack", "U1")
    assert GapLog(tmp_path / "gaps.jsonl", salt="other").asker("slack", "U1") != log.asker("slack", "U1")
    assert log.unanswered("slack", "C1", "U1", "q?", {"status": "answered"}) is None
    assert log.negative_feedback({"vote": "helpful", "question": "q?"}) is None
    vote = log.negative_feedback({"vote": "not_helpful", "platform": "slack", "user": "U1", "channel": "C1",
                                  "question": "q?", "chunk_ids": ["hr::remote::0", "hr::remote::1", "it::vpn::0"]})
    assert vote["nearest"] == ["hr", "it"] and vote["asker"] == log.asker("slack", "U1")


def test_citebot_gaps_prints_the_topics_and_json(tmp_path, monkeypatch, capsys, embed):
    path = tmp_path / "gaps.jsonl"
    seeded_log(path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CITEBOT_GAPS", str(path))
    monkeypatch.setenv("CITEBOT_DB", str(tmp_path / "db"))
    # The seeded log is dated 2026-12-03; read it as of then so the test does not age.
    monkeypatch.setattr("bot.gaps._now", lambda: NOW)
    assert main(["gaps", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["records"] == 56 and [t["count"] for t in data["topics"]] == [14, 12, 12, 10, 8]
    assert main(["gaps"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("56 unanswered question(s) and negative vote(s), 5 topic(s), last 90 days:")
    assert "1. Can contractors work remotely? (14×: 14 unanswered, 5 asker(s))" in text
    assert main(["gaps", "--since", "soon"]) == 2


def test_an_empty_log_says_so():
    assert report_text([]) == "No unanswered questions or negative feedback recorded in this period."
