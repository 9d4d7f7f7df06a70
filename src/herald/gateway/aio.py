"""Ending an asyncio task for sure.

`task.cancel()` then `await task` can wait forever: Python 3.11's `asyncio.wait_for`
drops a cancel that arrives in the same step as the result it was waiting for, and the
task goes on to its next wait (an IMAP IDLE, a long poll) as if nothing happened.
`end_task` cancels again until the task has ended.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

CANCEL_AGAIN_SECONDS = 0.5  # how long a cancelled task is given before it is cancelled again


async def end_task(task: asyncio.Future[Any]) -> None:
    """Cancel `task` and return once it has ended, whatever it raised (its outcome is
    retrieved, so nothing is logged as never retrieved).

    A cancel of the caller while it waits is held until the task has ended, then
    raised: a caller ending its helper from a `finally` (being cancelled itself, and
    perhaps cancelled again by an `end_task` of its own) never leaves the helper
    running behind it."""
    interrupted = False
    while not task.done():
        task.cancel()
        try:
            await asyncio.wait({task}, timeout=CANCEL_AGAIN_SECONDS)
        except asyncio.CancelledError:
            interrupted = True
    with contextlib.suppress(BaseException):
        task.result()
    if interrupted:
        raise asyncio.CancelledError
