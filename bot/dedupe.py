"""Chat platforms deliver at least once (Slack retries after a slow ack and sends an @mention both as
`app_mention` and as `message`; Teams may resend an activity). A bounded TTL set makes the second
delivery a no-op."""
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
