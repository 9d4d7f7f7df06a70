"""Waiting on a fake server's condition until a probe finds what a test expects."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_on(
    cond: threading.Condition,
    probe: Callable[[], T | None],
    timeout: float,
    *,
    fake: str,
    what: str,
) -> T:
    """Block until `probe()` returns something other than None/False; TimeoutError else."""
    deadline = time.monotonic() + timeout
    with cond:
        while True:
            result = probe()
            if result is not None and result is not False:
                return result
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"{fake}: timed out after {timeout}s waiting {what}")
            cond.wait(remaining)
