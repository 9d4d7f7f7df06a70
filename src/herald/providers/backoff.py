"""Retry pacing: exponential backoff with jitter, and a sleep that a cancel event
cuts short."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable


def backoff_delay(
    attempt: int,
    *,
    base: float,
    cap: float,
    retry_after: float | None = None,
    rng: Callable[[], float] = random.random,
) -> float:
    """Seconds to wait before retry number `attempt` (0 = the first retry).

    Exponential (`base * 2**attempt`) with "equal jitter": between half and all of
    that step, so concurrent clients spread out but never retry instantly. A
    server's `retry_after` is honoured as a floor. The result never exceeds `cap`.
    """
    if cap <= 0:
        return 0.0
    step = min(cap, base * (2 ** max(0, attempt)))
    delay = step / 2 + (step / 2) * rng()
    if retry_after is not None and retry_after > delay:
        delay = retry_after
    return max(0.0, min(cap, delay))


def sleep_interruptible(seconds: float, cancel: threading.Event | None) -> bool:
    """Sleep `seconds`; return False as soon as `cancel` is set (True if the full
    time passed). `Event.wait` wakes the moment the event is set."""
    seconds = max(0.0, seconds)
    if cancel is None:
        time.sleep(seconds)
        return True
    if cancel.is_set():
        return False
    return not cancel.wait(seconds)
