"""The knowledge-gap log and report. Every "I don't know" and every negative vote is one JSON line
(CITEBOT_GAPS, default .citebot/gaps.jsonl): time, platform, channel, the question, the knowledge
gap, the nearest documents, and the asker as a salted hash, never an id. Records older than
CITEBOT_GAP_RETENTION_DAYS are dropped. `citebot gaps`, `/citebot gaps` and the Teams `gaps`
command group the questions into topics with the embedding model and rank them by how often
they were asked: what the documents are missing, and where the answer would likely go."""
from __future__ import annotations

import hashlib
import os
import re
import secrets
import threading
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Callable

import numpy as np

from bot.records import FileRecords, RecordStore

NEAREST = 3  # documents kept per record: where an answer would most likely be added
# Mean cosine (all-MiniLM-L6-v2) of a question to a topic's questions above which it joins the
# topic. Rewordings of one question score 0.44-0.9 to each other, different questions rarely 0.4.
SAME_TOPIC = 0.45
EXAMPLES = 3
# What a 👎 can say was wrong with an answer (the choice offered after the vote, on every platform).
REASONS = {"wrong": "wrong", "outdated": "outdated", "incomplete": "incomplete", "not_asked": "not what I asked"}
SALT_KEY = "citebot:gap-salt"
_SINCE = re.compile(r"^\s*(\d+)\s*([dhw])\s*$")


def parse_since(text: str) -> timedelta:
    """`30d`, `12h`, `2w`."""
    match = _SINCE.match(text or "")
    if not match:
        raise ValueError(f"--since must look like 30d, 12h or 2w (got {text!r})")
    number, unit = int(match[1]), match[2]
    return timedelta(**{{"d": "days", "h": "hours", "w": "weeks"}[unit]: number})


def _now() -> datetime:
    return datetime.now(timezone.utc)


_file_locks: dict[Path, threading.Lock] = {}
_file_locks_guard = threading.Lock()


def _lock_for(path: Path) -> threading.Lock:
    """One lock per file per process: Slack and Teams each hold a GapLog over the same file."""
    with _file_locks_guard:
        return _file_locks.setdefault(path.resolve(), threading.Lock())


def gap_log(settings, shared=None) -> "GapLog":
    """`shared` (bot/shared.SharedState) keeps the records, and the salt, in Redis when it has a URL."""
    return GapLog(settings.gaps_path, settings.gap_retention_days, settings.gap_salt, shared=shared)


class GapLog:
    def __init__(self, path: Path, retention_days: int = 90, salt: str | None = None,
                 clock: Callable[[], datetime] | None = None, shared=None):
        self.path = Path(path)
        self.shared = shared
        # An unanswered question is kept each time; a vote's record is replaced when its reason
        # or comment arrives (one per person and answer, as in the feedback log).
        key_of = lambda record: record.get("vote_key")  # noqa: E731
        self.store: RecordStore = (shared.records("gaps", self.path, key_of) if shared
                                   else FileRecords(self.path, key_of))
        self.retention = timedelta(days=retention_days)
        self.clock = clock or (lambda: _now())
        self._salt = salt
        self._lock = _lock_for(self.path)  # one writer at a time

    def asker(self, platform: str, user_id: str | None) -> str | None:
        """The asker as a salted hash: the same person groups together, but cannot be named."""
        if not user_id:
            return None
        return hashlib.sha256(f"{self._salt_value()}:{platform}:{user_id}".encode()).hexdigest()[:16]

    def _salt_value(self) -> str:
        """CITEBOT_GAP_SALT, or one generated once and kept beside the log (readable by us only)."""
        if self._salt is None:
            salt_file = self.path.with_name(self.path.name + ".salt")
            with self._lock:
                if not salt_file.exists():
                    salt_file.parent.mkdir(parents=True, exist_ok=True)
                    descriptor = os.open(salt_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                    with os.fdopen(descriptor, "w") as out:
                        out.write(secrets.token_hex(32))
                self._salt = salt_file.read_text().strip()
            if self.shared is not None:  # replicas must hash an asker alike: the first salt in Redis wins
                self._salt = self.shared.run(lambda r: _shared_salt(r, self._salt), lambda: self._salt)
        return self._salt

    def append(self, record: dict) -> dict:
        record = {"time": self.clock().isoformat(timespec="seconds"), **record}
        cutoff = self.clock() - self.retention
        with self._lock:
            self.store.put(record)
            self.store.prune(lambda old: _time(old) < cutoff)  # expired records are deleted, not hidden
        return record

    def read(self, since: timedelta | None = None) -> list[dict]:
        """Records within retention (and within `since`, when given), oldest first."""
        window = min(since, self.retention) if since else self.retention
        cutoff = self.clock() - window
        with self._lock:
            return [r for r in self.store.all() if _time(r) >= cutoff]

    # --- what is recorded -------------------------------------------------------------------

    def unanswered(self, platform: str, channel: str | None, user_id: str | None, question: str,
                   output: dict) -> dict | None:
        """Records an "I don't know"; answers and failures (not a gap in the documents) are not."""
        if output.get("status") != "insufficient_context":
            return None
        return self.append({"kind": "unanswered", "platform": platform, "channel": channel,
                            "asker": self.asker(platform, user_id), "question": question,
                            "knowledge_gap": output.get("knowledge_gap"),
                            "nearest": list(output.get("retrieved_sources") or [])[:NEAREST]})

    def negative_feedback(self, vote: dict) -> dict | None:
        """Records a "didn't help" vote (a feedback record of bot/feedback.py)."""
        if vote.get("vote") != "not_helpful":
            return None
        cited = [chunk_id.split("::")[0] for chunk_id in vote.get("chunk_ids") or []]
        asker = self.asker(vote.get("platform") or "", vote.get("user"))
        return self.append({"kind": "negative_feedback", "platform": vote.get("platform"),
                            "channel": vote.get("channel") or vote.get("conversation"),
                            "asker": asker, "question": vote.get("question") or "", "knowledge_gap": None,
                            "nearest": list(dict.fromkeys(cited))[:NEAREST],
                            "reason": vote.get("reason") or "", "comment": vote.get("comment") or "",
                            "vote_key": f"{vote['ref']}|{asker}" if vote.get("ref") else None})


def _shared_salt(r, mine: str) -> str:
    r.set(SALT_KEY, mine, nx=True)
    stored = r.get(SALT_KEY)
    return stored.decode() if isinstance(stored, bytes) else stored


def _time(record: dict) -> datetime:
    try:
        when = datetime.fromisoformat(record["time"])
    except (KeyError, TypeError, ValueError):
        return datetime.min.replace(tzinfo=timezone.utc)  # unreadable time: treated as expired
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


# --- the report ---------------------------------------------------------------------------------

@dataclass
class Topic:
    questions: list[str] = field(default_factory=list)
    records: list[dict] = field(default_factory=list)
    label: str = ""

    @property
    def count(self) -> int:
        return len(self.records)

    def as_dict(self) -> dict:
        nearest = Counter(source for r in self.records for source in r.get("nearest") or [])
        negative = [r for r in self.records if r.get("kind") == "negative_feedback"]
        gaps = Counter(r["knowledge_gap"] for r in self.records if r.get("knowledge_gap"))
        return {
            "topic": self.label, "count": self.count,
            "askers": len({r.get("asker") for r in self.records if r.get("asker")}),
            "unanswered": self.count - len(negative), "negative_feedback": len(negative),
            "examples": list(dict.fromkeys(self.questions))[:EXAMPLES],
            "nearest_documents": [source for source, _ in nearest.most_common(NEAREST)],
            "knowledge_gap": gaps.most_common(1)[0][0] if gaps else None,
            "comments": [r["comment"] for r in negative if r.get("comment")][:EXAMPLES],
            "reasons": dict(Counter(r["reason"] for r in negative if r.get("reason")).most_common()),
            "last_asked": max(r.get("time", "") for r in self.records),
        }


def topics(records: list[dict], embed: Callable[[list[str]], np.ndarray],
           threshold: float = SAME_TOPIC) -> list[dict]:
    """Records grouped by what they asked, most asked first. Each question joins the topic whose
    questions it is closest to on average (above `threshold`), else opens a new one; a topic is
    labelled with its most central question."""
    records = [r for r in records if (r.get("question") or "").strip()]
    if not records:
        return []
    questions = [r["question"].strip() for r in records]
    vectors = np.asarray(embed(questions), dtype=np.float32)
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    members: list[list[int]] = []
    for i, vector in enumerate(vectors):
        closeness = [float(np.mean(vectors[group] @ vector)) for group in members]
        best = int(np.argmax(closeness)) if closeness else -1
        if best >= 0 and closeness[best] >= threshold:
            members[best].append(i)
        else:
            members.append([i])
    found = []
    for group in members:
        similarity = vectors[group] @ vectors[group].T
        central = group[int(np.argmax(similarity.sum(axis=1)))]
        found.append(Topic(questions=[questions[i] for i in group], records=[records[i] for i in group],
                           label=questions[central]))
    found.sort(key=lambda t: (-t.count, t.label))
    return [t.as_dict() for t in found]


def report_text(found: list[dict], limit: int | None = None, bold: str = "{}") -> str:
    """The topics as plain lines (terminal, Slack mrkdwn and Teams markdown alike)."""
    if not found:
        return "No unanswered questions or negative feedback recorded in this period."
    lines = []
    for rank, topic in enumerate(found[:limit] if limit else found, 1):
        parts = [f"{topic['unanswered']} unanswered"]
        if topic["negative_feedback"]:
            parts.append(f"{topic['negative_feedback']} marked unhelpful")
        lines.append(f"{rank}. {bold.format(topic['topic'])} ({topic['count']}×: {', '.join(parts)}, "
                     f"{topic['askers']} asker(s))")
        for example in topic["examples"]:
            if example != topic["topic"]:
                lines.append(f"   - {example}")
        if topic["knowledge_gap"]:
            lines.append(f"   gap: {topic['knowledge_gap']}")
        if topic["nearest_documents"]:
            lines.append(f"   nearest documents: {', '.join(topic['nearest_documents'])}")
        if topic.get("reasons"):
            lines.append("   why unhelpful: " + ", ".join(f"{REASONS.get(r, r)} ×{n}" for r, n in topic["reasons"].items()))
        for comment in topic["comments"]:
            lines.append(f"   feedback: “{comment}”")
    if limit and len(found) > limit:
        lines.append(f"… and {len(found) - limit} more topic(s): run `citebot gaps` for all of them.")
    return "\n".join(lines)
