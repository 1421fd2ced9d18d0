"""The serving process's native heap (glibc's malloc), kept near what the process uses.

glibc keeps memory that start-up freed (checking the index, loading the model) instead of giving
it back, and gives each thread that allocates under contention its own arena (up to eight per
core), each holding its own free memory. Both count in the resident size an admin sizes a
container by. Measured on the bundled corpus (`citebot bench`'s serve peak): the trim after
start-up -30 MB, two arenas -20 MB. Elsewhere (musl, macOS) both are no-ops."""
from __future__ import annotations

import ctypes
import gc
import sys

_M_ARENA_MAX = -8  # mallopt's parameter number, from glibc's malloc.h
ARENAS = 2  # enough for a process whose Python threads share one GIL


def _glibc():
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL("libc.so.6")
        return libc if hasattr(libc, "malloc_trim") and hasattr(libc, "mallopt") else None
    except OSError:
        return None


def limit_arenas(count: int = ARENAS) -> bool:
    """Call before the process starts its threads: arenas already made stay."""
    libc = _glibc()
    return bool(libc and libc.mallopt(_M_ARENA_MAX, count))


def give_back() -> bool:
    """Return the heap's free memory to the system (after start-up, after a reload)."""
    gc.collect()
    libc = _glibc()
    return bool(libc and libc.malloc_trim(0))
