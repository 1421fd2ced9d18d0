"""The state replicas of one deployment share: seen events, the Teams conversation memory, the
reload lock, feedback and other records. In Redis with CITEBOT_REDIS_URL (so Slack's retry of an
event on another replica is still dropped, and records survive a restart); in this process without
it. While Redis is unreachable every replica keeps answering with its own in-process state, logs
it once, and `status` says so; Redis is tried again every RETRY_AFTER seconds."""
from __future__ import annotations

import logging
import threading
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, TypeVar

import redis

from bot.dedupe import RedisSeen, SeenCache
from bot.memory import ConversationMemory, InProcessMemory, RedisMemory
from bot.records import FileRecords, KeyOf, RecordStore, RedisRecords

log = logging.getLogger(__name__)
PREFIX = "citebot:"
RETRY_AFTER = 5.0
# A reload that has not finished after this long is taken to have died with its replica.
RELOAD_TIMEOUT = 3600
T = TypeVar("T")


class SharedState:
    def __init__(self, redis_url: str | None):
        self.redis = (redis.Redis.from_url(redis_url, socket_timeout=2, socket_connect_timeout=1)
                      if redis_url else None)
        self.down_since: float | None = None  # epoch seconds of the first failed call
        self._retry_at = 0.0
        self._guard = threading.Lock()
        self.reload_lock = ReloadLock(self)

    def run(self, operation: Callable[[redis.Redis], T], fallback: Callable[[], T]) -> T:
        """`operation` on Redis; `fallback` (in-process) without a URL or while Redis is unreachable."""
        if self.redis is None or time.monotonic() < self._retry_at:
            return fallback()
        try:
            result = operation(self.redis)
        except (redis.ConnectionError, redis.TimeoutError) as error:
            with self._guard:
                self._retry_at = time.monotonic() + RETRY_AFTER
                if self.down_since is None:
                    self.down_since = time.time()
                    log.error("Redis is unreachable (%s): this replica answers with its own in-process "
                              "state until it is back", error)
            return fallback()
        if self.down_since is not None:
            with self._guard:
                if self.down_since is not None:
                    log.warning("Redis is reachable again: shared state restored")
                    self.down_since = None
        return result

    def describe(self) -> str:
        """One line for `status`."""
        if self.redis is None:
            return "in this process (no CITEBOT_REDIS_URL)"
        self.run(lambda r: r.ping(), lambda: None)
        if self.down_since is not None:
            since = datetime.fromtimestamp(self.down_since, timezone.utc).strftime("%H:%M:%S UTC")
            return f"Redis unreachable since {since}; this replica answers with its own in-process state"
        return "Redis (shared by every replica)"

    def seen(self, ttl: float = 600.0) -> SeenCache | RedisSeen:
        local = SeenCache(ttl=ttl)
        return local if self.redis is None else RedisSeen(self, PREFIX + "seen:", ttl, local)

    def memory(self, max_turns: int) -> ConversationMemory:
        local = InProcessMemory(max_turns=max_turns)
        return local if self.redis is None else RedisMemory(self, PREFIX + "memory:", local)

    def records(self, name: str, path: Path, key_of: KeyOf) -> RecordStore:
        """Records kept in `path` without Redis, and there too while Redis is unreachable."""
        local = FileRecords(path, key_of)
        return local if self.redis is None else RedisRecords(self, PREFIX + name, local)


class ReloadLock:
    """One reload at a time across every replica (redis-py's Lock, which expires so a replica killed
    mid-reload does not block the next), and always within this process."""

    def __init__(self, shared: SharedState):
        self.shared = shared
        self._local = threading.Lock()
        self._held: redis.lock.Lock | None = None

    def acquire(self) -> bool:
        """Without waiting: False when a reload already runs here or on another replica."""
        if not self._local.acquire(blocking=False):
            return False
        lock = self.shared.redis.lock(PREFIX + "reload", timeout=RELOAD_TIMEOUT, thread_local=False) if self.shared.redis else None
        taken = self.shared.run(lambda r: lock.acquire(blocking=False), lambda: None)
        if taken is False:
            self._local.release()
            return False
        self._held = lock if taken else None  # None: this process's lock only (no Redis now)
        return True

    def run(self, work: Callable[[], T], started: Callable[[], object] | None = None) -> T | None:
        """The one way to reload: `work` (a refresh, a rollback) while holding the lock, then the
        lock released whatever happened. None, without running it, when a reload already runs here
        or on another replica. `started` runs once the lock is taken (before the work), so that
        nobody is told "Reloading…" by two reloads at once."""
        if not self.acquire():
            return None
        try:
            if started is not None:
                started()
            return work()
        finally:
            self.release()

    def release(self) -> None:
        held, self._held = self._held, None
        if held is not None:
            try:
                self.shared.run(lambda r: held.release(), lambda: None)
            except redis.exceptions.LockError:  # it expired and may be someone else's now
                log.warning("the reload lock had expired before the reload finished")
        self._local.release()
