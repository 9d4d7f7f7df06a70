"""Helpers shared by the gateway tests."""

from __future__ import annotations

import asyncio
from collections.abc import Callable


async def eventually(predicate: Callable[[], bool], timeout: float = 10.0) -> None:
    """Wait until `predicate()` holds (polling; for state that is not a send)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.02)
