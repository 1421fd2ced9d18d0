"""Bounded waits for a chat model: which faults are worth another try, how long to wait before
it (the provider's Retry-After when it sends one), and a circuit breaker that stops calling a
provider that keeps failing. The caller falls back to the offline answer whenever the model
is unavailable (`WriterUnavailable`)."""
from __future__ import annotations

import email.utils
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

_TRANSIENT_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
# Exception classes of provider SDKs and their HTTP clients (openai, anthropic, httpx, requests,
# urllib3) for a timeout or a connection that failed, by name: no SDK needs to be installed.
_TIMEOUT_NAMES = ("Timeout", "TimeoutError", "TimeoutException", "ReadTimeout", "ConnectTimeout",
                  "APITimeoutError", "PoolTimeout", "WriteTimeout")
_CONNECTION_NAMES = ("ConnectionError", "ConnectError", "APIConnectionError", "RemoteProtocolError",
                     "ReadError", "NewConnectionError", "ProtocolError")


class WriterUnavailable(RuntimeError):
    """The chat model could not write this answer (down, too slow, failing, or skipped while the
    circuit is open); the reason is for the log."""


def _chain(error: BaseException):
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        yield error
        error = error.__cause__ or error.__context__


def _named(error: BaseException, names: tuple[str, ...]) -> bool:
    return any(cls.__name__ in names for cls in type(error).__mro__)


def status_of(error: BaseException) -> int | None:
    status = getattr(error, "status_code", None) or getattr(getattr(error, "response", None), "status_code", None)
    return status if isinstance(status, int) else None


def refused(error: BaseException) -> bool:
    """Nothing listens at the provider's address: no retry can help within one answer."""
    return any(isinstance(e, ConnectionRefusedError) or "connection refused" in str(e).lower()
               or "[errno 111]" in str(e).lower() for e in _chain(error))


def is_transient(error: BaseException) -> bool:
    """A fault worth a second try: a timeout, a dropped connection, a rate limit or a server
    error (the HTTP status on the exception or its response). A bug or a bad request is not."""
    for e in _chain(error):
        if isinstance(e, (TimeoutError, ConnectionError)) or _named(e, _TIMEOUT_NAMES + _CONNECTION_NAMES):
            return True
        if status_of(e) in _TRANSIENT_STATUS:
            return True
    return False


def retry_after(error: BaseException) -> float | None:
    """Seconds the provider asked us to wait (Retry-After, in seconds or as an HTTP date)."""
    for e in _chain(error):
        headers = getattr(getattr(e, "response", None), "headers", None) or {}
        value = headers.get("retry-after") if hasattr(headers, "get") else None
        if not value:
            continue
        try:
            return max(0.0, float(value))
        except ValueError:
            when = email.utils.parsedate_to_datetime(value)
            return max(0.0, when.timestamp() - time.time()) if when else None
    return None


@dataclass
class Breaker:
    """After `threshold` failed answers in a row the model is skipped for `cooldown` seconds
    (answers quote the documents meanwhile); then one answer tries it again, and a success
    closes the circuit."""
    threshold: int = 3
    cooldown: float = 60.0
    clock: Callable[[], float] = time.monotonic
    failures: int = 0
    opened_at: float | None = None
    last_error: str = ""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def allows(self) -> bool:
        with self._lock:
            return self.opened_at is None or self.clock() - self.opened_at >= self.cooldown

    def succeeded(self) -> None:
        with self._lock:
            self.failures, self.opened_at, self.last_error = 0, None, ""

    def failed(self, reason: str) -> None:
        with self._lock:
            self.failures += 1
            self.last_error = reason
            if self.failures >= self.threshold:
                self.opened_at = self.clock()  # a failed trial after the cooldown opens it again

    def describe(self) -> str:
        """One line for `status`."""
        with self._lock:
            if self.opened_at is None:
                return f"available ({self.failures} failure(s) in a row)" if self.failures else "available"
            left = self.cooldown - (self.clock() - self.opened_at)
            when = f"tried again in {left:.0f} s" if left > 0 else "tried again with the next question"
            return (f"unavailable after {self.failures} failures in a row ({self.last_error}); answers quote "
                    f"the documents, {when}")
