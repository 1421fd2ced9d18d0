"""Feedback from every platform as JSON lines (CITEBOT_FEEDBACK, default .citebot/feedback.jsonl): one
record per click, append-only, so `citebot eval` and a spreadsheet can both read it."""
from __future__ import annotations

import json
import threading
from datetime import datetime, timezone
from pathlib import Path


class FeedbackLog:
    def __init__(self, path: Path):
        self.path = Path(path)
        self._lock = threading.Lock()  # one line per write, even with clicks arriving together

    def append(self, record: dict) -> dict:
        record = {"time": datetime.now(timezone.utc).isoformat(timespec="seconds"), **record}
        line = json.dumps(record, ensure_ascii=False) + "\n"
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as out:
                out.write(line)
        return record

    def read(self) -> list[dict]:
        if not self.path.exists():
            return []
        return [json.loads(line) for line in self.path.read_text(encoding="utf-8").splitlines() if line]
