"""Chat platforms deliver at least once (Slack retries after a slow ack and sends an @mention both as
`app_mention` and as `message`; Teams may resend an activity). A bounded TTL set makes the second
delivery a no-op. Replicas share the set in Redis (RedisSeen): the retry may reach another one."""
from __future__ import annotations

import threading
import time
from collections import OrderedDict
from typing import Callable, Hashable


class SeenCache:
    """Remembers keys for `ttl` seconds, at most `max_size` of them (oldest forgotten first)."""

    def __init__(self, ttl: float = 600.0, max_size: int = 10_000,
                 clock: Callable[[], float] = time.monotonic):
        self.ttl, self.max_size, self._clock = ttl, max_size, clock
        self._seen: OrderedDict[Hashable, float] = OrderedDict()
        self._lock = threading.Lock()

    def first_time(self, key: Hashable) -> bool:
        """True exactly once per key within the TTL (atomic across threads)."""
        now = self._clock()
        with self._lock:
            while self._seen and (len(self._seen) >= self.max_size
                                  or next(iter(self._seen.values())) <= now - self.ttl):
                self._seen.popitem(last=False)
            if key in self._seen:
                return False
            self._seen[key] = now
            return True

    def forget(self, key: Hashable) -> None:
        """The next first_time(key) is True again (what it guarded did not happen after all)."""
        with self._lock:
            self._seen.pop(key, None)


class RedisSeen:
    """The same promise across replicas: SET NX with an expiry, one key per event. While Redis is
    unreachable, this process's own SeenCache decides (bot/shared.py)."""

    def __init__(self, shared, prefix: str, ttl: float, local: SeenCache):
        self.shared, self.prefix, self.ttl, self.local = shared, prefix, max(1, int(ttl)), local

    def _name(self, key: Hashable) -> str:
        return self.prefix + (":".join(map(str, key)) if isinstance(key, tuple) else str(key))

    def first_time(self, key: Hashable) -> bool:
        name = self._name(key)
        return self.shared.run(lambda r: bool(r.set(name, 1, nx=True, ex=self.ttl)),
                               lambda: self.local.first_time(key))

    def forget(self, key: Hashable) -> None:
        name = self._name(key)
        self.shared.run(lambda r: r.delete(name), lambda: self.local.forget(key))
