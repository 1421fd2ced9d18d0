"""What the benchmarks measure with: wall time per item in milliseconds and its percentiles,
a folder's size on disk, a free port for a server they start."""
from __future__ import annotations

import socket
import time
from pathlib import Path

from .evaluation import percentile


def folder_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in Path(path).rglob("*") if f.is_file())


def timed(run, items) -> list[float]:
    times = []
    for item in items:
        started = time.perf_counter()
        run(item)
        times.append((time.perf_counter() - started) * 1000)
    return times


def percentiles(times: list[float]) -> dict:
    return {"runs": len(times), "p50_ms": percentile(times, 50), "p95_ms": percentile(times, 95)}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
