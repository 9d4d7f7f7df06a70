"""Fewer malloc arenas for the long-lived gateway process.

glibc gives threads their own malloc arenas (up to eight per core). The gateway runs
every turn on a pool thread and watches every model call from a short-lived thread, so
over days the heap is spread over many arenas whose freed pages are rarely returned:
the soak bench (`bench/gateway_soak.py --turns 5000`) showed RSS still climbing with
no Python object growing (tracemalloc flat). Two arenas keep contention low for a
process whose Python code holds the GIL anyway, and keep the resident size flat.

`MALLOC_ARENA_MAX` in the environment wins: the owner's own tuning is kept.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os

log = logging.getLogger(__name__)

M_ARENA_MAX = -8  # from glibc's malloc.h
GATEWAY_ARENAS = 2


def limit_malloc_arenas(count: int = GATEWAY_ARENAS) -> bool:
    """Cap glibc's arenas at `count` for this process; False where that is not possible
    (not glibc, or `MALLOC_ARENA_MAX` set by the owner) or refused."""
    if os.environ.get("MALLOC_ARENA_MAX"):
        return False
    name = ctypes.util.find_library("c")
    if not name:
        return False
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # musl and others have no mallopt
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    done = mallopt(M_ARENA_MAX, count) == 1
    if not done:
        log.debug("mallopt(M_ARENA_MAX, %d) was refused", count)
    return done
