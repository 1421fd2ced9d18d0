"""Feedback from every platform: one record per person per answer, so `citebot eval` and a
spreadsheet can both read it. In CITEBOT_FEEDBACK (default .citebot/feedback.jsonl), or in Redis
when replicas share state (CITEBOT_REDIS_URL)."""
from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from bot.records import FileRecords, RecordStore


def vote_key(record: dict) -> str | None:
    """A later vote by the same `user` on the same answer (`ref`) replaces the earlier one: a
    double click or a changed mind leaves a single record."""
    return f"{record['ref']}|{record.get('user')}" if record.get("ref") else None


class FeedbackLog:
    def __init__(self, path: Path, shared=None):
        """`shared` (bot/shared.SharedState) keeps the records in Redis when it has a URL."""
        self.store: RecordStore = shared.records("feedback", path, vote_key) if shared else FileRecords(path, vote_key)

    def append(self, record: dict) -> dict:
        record = {"time": datetime.now(timezone.utc).isoformat(timespec="seconds"), **record}
        self.store.put(record)
        return record

    def read(self) -> list[dict]:
        return self.store.all()
