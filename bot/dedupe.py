"""Slack delivers at least once: retries after a slow ack, and an @mention arrives both as
`app_mention` and as `message`. A bounded TTL set makes the second delivery a no-op."""
from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from typing import Callable, Hashable

from slack_bolt import BoltResponse

log = logging.getLogger(__name__)


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


def drop_redelivered_events(seen: SeenCache):
    """Bolt middleware: an `event_callback` whose event_id was already taken is acked and
    dropped. Slack's retries (X-Slack-Retry-Num) reuse the event_id, so they land here too;
    a retry whose first delivery never reached us still gets answered."""

    def middleware(body: dict, request, next) -> BoltResponse | None:
        event_id = body.get("event_id") if body.get("type") == "event_callback" else None
        if event_id and not seen.first_time(("event", event_id)):
            retry = request.headers.get("x-slack-retry-num", ["0"])[0]
            log.info("dropping duplicate delivery of %s (retry %s)", event_id, retry)
            return BoltResponse(status=200, body="")
        return next()

    return middleware
