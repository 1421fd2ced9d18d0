"""How far an index build has got: chunks and documents embedded of how many, and an estimate of
the time left. On a terminal, one bar redrawn in place; otherwise (a log file, a container, the
server's reload) a log line every `INTERVAL` seconds, so a long build is never silent.

Embedding is the long part of a build (the rest takes seconds even for thousands of chunks), so
that is what is counted; the estimate is the rate so far applied to what is left."""
from __future__ import annotations

import logging
import sys
import time
from bisect import bisect_left
from typing import Callable, TextIO

log = logging.getLogger(__name__)
# Its lines are the point of running `citebot index` in a pipe or a container: shown at the
# CLI's default WARNING level too (the level of this logger, not of the root, decides).
log.setLevel(logging.INFO)

INTERVAL = 5.0  # seconds between log lines off a terminal
BAR = 24  # characters of the bar


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 60} min {seconds % 60:02d} s" if seconds >= 60 else f"{seconds} s"


class Progress:
    """`advance(n)` after each `n` chunks are embedded; `finish()` at the end. `owners` is each
    chunk's document, in the order the chunks are embedded."""

    def __init__(self, owners: list[str], stream: TextIO | None = None, clock: Callable[[], float] = time.monotonic,
                 interval: float | None = None):
        self.total, self.done = len(owners), 0
        # A document is done once its last chunk is: the chunk index after which it is.
        last = {owner: i for i, owner in enumerate(owners)}
        self._documents_after = sorted(last.values())
        self.documents = len(last)
        self.stream = stream if stream is not None else sys.stderr
        self.terminal = bool(getattr(self.stream, "isatty", lambda: False)())
        self.clock, self.interval = clock, INTERVAL if interval is None else interval
        self.started = self._said = clock()
        if self.terminal:
            self.advance(0)
        elif self.total:
            log.info("indexing: embedding %d chunks of %d documents", self.total, self.documents)

    def documents_done(self) -> int:
        return bisect_left(self._documents_after, self.done)

    def left(self) -> float | None:
        """Seconds left at the rate so far; None before anything is done."""
        spent = self.clock() - self.started
        if not self.done or spent <= 0:
            return None
        return (self.total - self.done) * spent / self.done

    def line(self) -> str:
        left = self.left()
        estimate = f", about {_duration(left)} left" if left is not None and self.done < self.total else ""
        return (f"embedded {self.done} of {self.total} chunks ({100 * self.done // max(self.total, 1)}%), "
                f"{self.documents_done()} of {self.documents} documents{estimate}")

    def advance(self, chunks: int) -> None:
        self.done = min(self.total, self.done + chunks)
        now = self.clock()
        if self.terminal:
            filled = BAR * self.done // max(self.total, 1)
            self.stream.write(f"\r[{'#' * filled}{'.' * (BAR - filled)}] {self.line()}\x1b[K")
            self.stream.flush()
        elif now - self._said >= self.interval and self.done < self.total:
            self._said = now
            log.info("indexing: %s", self.line())

    def finish(self) -> None:
        if self.terminal and self.total:
            self.stream.write("\n")
            self.stream.flush()
