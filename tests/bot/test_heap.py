"""bot/heap.py: the serving process gives freed native memory back to the system, so the
resident size an admin sizes a container by is what the process uses (its figure: the serve
peak in `citebot bench`)."""
from __future__ import annotations

import subprocess
import sys

import pytest

from bot import heap

pytestmark = pytest.mark.skipif(heap._glibc() is None, reason="glibc's malloc only")

# 300,000 blocks of 600 bytes (~190 MB on the heap, as start-up's many small objects are), one in
# fifty kept alive so that the freed memory lies between blocks still in use.
PROBE = """
import sys
from bot import heap

def rss():
    return int(next(line.split()[1] for line in open("/proc/self/status") if line.startswith("VmRSS"))) // 1024

held = [bytes(600) for _ in range(300_000)]
kept_alive = held[::50]
del held
freed = rss()
if sys.argv[1] == "give":
    heap.give_back()
print(freed, rss())
"""


def _resident(how: str) -> tuple[int, int]:
    done = subprocess.run([sys.executable, "-c", PROBE, how], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    freed, after = map(int, done.stdout.split())
    return freed, after


def test_memory_freed_after_start_up_leaves_the_resident_size():
    freed, after = _resident("keep")
    assert freed > 150 and after > 150, "glibc keeps freed small blocks resident: what the trim is for"
    freed, after = _resident("give")
    assert after < freed - 100, f"only {freed - after} MB of the ~190 MB freed was given back"
