"""Feedback from every platform as JSON lines (CITEBOT_FEEDBACK, default .citebot/feedback.jsonl): one
record per person per answer, so `citebot eval` and a spreadsheet can both read it."""
from __future__ import annotations

import json
import os
import threading
from datetime import datetime, timezone
from pathlib import Path


class FeedbackLog:
    def __init__(self, path: Path):
        self.path = Path(path)
        self._lock = threading.Lock()  # one writer at a time, even with clicks arriving together

    def append(self, record: dict) -> dict:
        """Adds the record. A later vote by the same `user` on the same answer (`ref`) replaces
        the earlier one: a double click or a changed mind leaves a single record."""
        record = {"time": datetime.now(timezone.utc).isoformat(timespec="seconds"), **record}
        line = json.dumps(record, ensure_ascii=False) + "\n"
        key = (record.get("ref"), record.get("user"))
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            lines = self.path.read_text(encoding="utf-8").splitlines(keepends=True) if self.path.exists() else []
            kept = [old for old in lines if not key[0] or _key(old) != key]
            if len(kept) == len(lines):
                with self.path.open("a", encoding="utf-8") as out:
                    out.write(line)
            else:  # rewrite whole, then swap: a crash mid-write never loses the other records
                scratch = self.path.with_name(self.path.name + ".tmp")
                scratch.write_text("".join(kept) + line, encoding="utf-8")
                os.replace(scratch, self.path)
        return record

    def read(self) -> list[dict]:
        if not self.path.exists():
            return []
        return [json.loads(line) for line in self.path.read_text(encoding="utf-8").splitlines() if line]


def _key(line: str) -> tuple:
    try:
        record = json.loads(line)
    except ValueError:
        return (None, None)  # a damaged line is kept as it is, never matched
    return record.get("ref"), record.get("user")
