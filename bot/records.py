"""Where the bot's records go (feedback now; any other log of one JSON object per record, such as
knowledge gaps): behind one small interface, a JSON-lines file by default, a Redis hash when
replicas share state (bot/shared.py). A record with the key of an earlier one replaces it."""
from __future__ import annotations

import fcntl
import json
import os
import tempfile
import threading
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Protocol

KeyOf = Callable[[dict], "str | None"]  # a record's identity; None: never replaced


class RecordStore(Protocol):
    def put(self, record: dict) -> None:
        """Add the record; an earlier one with the same key is replaced."""

    def all(self) -> list[dict]:
        """Every record, oldest first."""

    def prune(self, expired: Callable[[dict], bool]) -> None:
        """Remove the records for which `expired` is true (a retention period)."""


class FileRecords:
    """One JSON object a line, so a spreadsheet and `citebot eval` can both read it."""

    def __init__(self, path: Path, key_of: KeyOf):
        self.path, self.key_of = Path(path), key_of

    @contextmanager
    def _writing(self):
        """One writer at a time per file: every FileRecords over the file in this process shares
        one lock (Slack and Teams each hold a store over the feedback file), and processes (the
        bot, `citebot gaps`) take an flock on a lock file beside it, which a swap never replaces."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with _lock_for(self.path), open(self.path.with_name(self.path.name + ".lock"), "a") as guard:
            fcntl.flock(guard, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(guard, fcntl.LOCK_UN)

    def put(self, record: dict) -> None:
        line = json.dumps(record, ensure_ascii=False) + "\n"
        key = self.key_of(record)
        with self._writing():
            lines = self._lines() if key is not None else []  # a record without a key replaces nothing
            kept = [old for old in lines if self._key(old) != key]
            if len(kept) == len(lines):
                self._append(line)
            else:
                self._rewrite(kept + [line])

    def all(self) -> list[dict]:
        return [record for line in self._lines() if (record := _parsed(line)) is not None]

    def prune(self, expired: Callable[[dict], bool]) -> None:
        with self._writing():
            lines = self._lines()
            kept = [line for line in lines if (record := _parsed(line)) is None or not expired(record)]
            if len(kept) < len(lines):
                self._rewrite(kept)

    def _lines(self) -> list[str]:
        return self.path.read_text(encoding="utf-8").splitlines(keepends=True) if self.path.exists() else []

    def _append(self, line: str) -> None:
        """One write of the whole line: O_APPEND puts it at the end, never inside another record."""
        descriptor = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(descriptor, line.encode("utf-8"))
        finally:
            os.close(descriptor)

    def _rewrite(self, lines: list[str]) -> None:
        """Write whole to a scratch file of our own, then swap: a crash mid-write never loses the
        other records, and no other writer can take or remove the scratch file."""
        descriptor, scratch = tempfile.mkstemp(prefix=self.path.name + ".", suffix=".tmp", dir=self.path.parent)
        try:
            with os.fdopen(descriptor, "w", encoding="utf-8") as out:
                out.write("".join(lines))
            os.replace(scratch, self.path)
        except BaseException:
            Path(scratch).unlink(missing_ok=True)
            raise

    def _key(self, line: str) -> str | None:
        record = _parsed(line)  # a damaged line is kept as it is, never matched
        return self.key_of(record) if record is not None else None


class RedisRecords:
    """A Redis hash of the records by key, shared by replicas and kept across their restarts. While
    Redis is unreachable, records go to this replica's file (`local`), and are read from both."""

    def __init__(self, shared, name: str, local: FileRecords):
        self.shared, self.name, self.local = shared, name, local

    def put(self, record: dict) -> None:
        field = self.local.key_of(record) or uuid.uuid4().hex
        self.shared.run(lambda r: r.hset(self.name, field, json.dumps(record, ensure_ascii=False)),
                        lambda: self.local.put(record))

    def all(self) -> list[dict]:
        stored = self.shared.run(lambda r: [json.loads(value) for value in r.hvals(self.name)], list)
        return sorted(stored + self.local.all(), key=lambda record: str(record.get("time", "")))

    def prune(self, expired: Callable[[dict], bool]) -> None:
        def drop(r) -> None:
            gone = [field for field, value in r.hgetall(self.name).items() if expired(json.loads(value))]
            if gone:
                r.hdel(self.name, *gone)

        self.shared.run(drop, lambda: None)
        self.local.prune(expired)


_locks: dict[Path, threading.Lock] = {}
_locks_guard = threading.Lock()


def _lock_for(path: Path) -> threading.Lock:
    """The one lock of this process for the file at `path`, however it is named."""
    with _locks_guard:
        return _locks.setdefault(path.resolve(), threading.Lock())


def _parsed(line: str) -> dict | None:
    """A record line; None for a blank or damaged one (kept in the file, never fatal)."""
    try:
        record = json.loads(line)
    except ValueError:
        return None
    return record if isinstance(record, dict) else None
