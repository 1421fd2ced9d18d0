"""Feedback from every platform: one record per person per answer, so `citebot eval` and a
spreadsheet can both read it. In CITEBOT_FEEDBACK (default .citebot/feedback.jsonl), or in Redis
when replicas share state (CITEBOT_REDIS_URL). Like the gap log, a record names the voter only as
a salted hash and is deleted after CITEBOT_GAP_RETENTION_DAYS."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Callable

from bot.gaps import _time, gap_log
from bot.records import FileRecords, RecordStore

Hasher = Callable[[str, "str | None"], "str | None"]  # (platform, user id) -> salted hash


def vote_key(record: dict) -> str | None:
    """A later vote by the same `user` on the same answer (`ref`) replaces the earlier one: a
    double click or a changed mind leaves a single record."""
    return f"{record['ref']}|{record.get('user')}" if record.get("ref") else None


def feedback_log(settings, shared=None) -> "FeedbackLog":
    """The process's feedback log: voters hashed with the gap log's salt, kept as long as it."""
    gaps = gap_log(settings, shared)
    return FeedbackLog(settings.feedback_path, shared, hasher=gaps.asker, retention_days=settings.gap_retention_days)


class FeedbackLog:
    def __init__(self, path: Path, shared=None, hasher: Hasher | None = None, retention_days: int | None = None):
        """`shared` (bot/shared.SharedState) keeps the records in Redis when it has a URL. Without
        `hasher` and `retention_days` (a reader, a test) records are read and written as given."""
        self.store: RecordStore = shared.records("feedback", path, vote_key) if shared else FileRecords(path, vote_key)
        self.hasher = hasher
        self.retention = timedelta(days=retention_days) if retention_days else None

    def append(self, record: dict) -> dict:
        """Stores the vote with its voter hashed; returns it as given (with its time), so the
        platform can still thank the voter and the gap log hashes the same id alike."""
        now = datetime.now(timezone.utc)
        record = {"time": now.isoformat(timespec="seconds"), **record}
        stored = dict(record)
        if self.hasher is not None:
            stored["user"] = self.hasher(str(record.get("platform") or ""), record.get("user"))
        self.store.put(stored)
        if self.retention is not None:
            cutoff = now - self.retention
            self.store.prune(lambda old: _time(old) < cutoff)
        return record

    def read(self) -> list[dict]:
        return self.store.all()

