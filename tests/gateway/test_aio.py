"""`end_task`: a cancelled task is ended for sure, even one that drops a cancel."""

from __future__ import annotations

import asyncio

import pytest

from herald.gateway.aio import end_task


async def _swallows_one_cancel(ended: asyncio.Event) -> None:
    try:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            await asyncio.sleep(3600)  # the cancel dropped, as 3.11's wait_for can
    finally:
        ended.set()


async def test_a_task_that_drops_a_cancel_is_cancelled_again_until_it_ends() -> None:
    ended = asyncio.Event()
    task = asyncio.ensure_future(_swallows_one_cancel(ended))
    await asyncio.sleep(0)
    done, _ = await asyncio.wait({asyncio.ensure_future(end_task(task))}, timeout=10)
    assert done and ended.is_set() and task.cancelled()


async def test_a_failed_or_finished_task_is_left_as_it_ended() -> None:
    async def fails() -> None:
        raise ValueError("its own error")

    failed = asyncio.ensure_future(fails())
    await asyncio.sleep(0)
    await end_task(failed)  # its error is retrieved, not raised to the caller
    assert isinstance(failed.exception(), ValueError)
    finished = asyncio.ensure_future(asyncio.sleep(0, result=7))
    await asyncio.sleep(0.01)
    await end_task(finished)
    assert finished.result() == 7


async def test_the_callers_own_cancel_waits_until_the_task_has_ended() -> None:
    """A caller ending its helper while being cancelled itself (and cancelled again)
    gets its cancel only after the helper has ended: nothing is left running."""
    ended = asyncio.Event()
    helper = asyncio.ensure_future(_swallows_one_cancel(ended))

    async def owner() -> None:
        try:
            await asyncio.sleep(3600)
        finally:
            await end_task(helper)

    outer = asyncio.ensure_future(owner())
    await asyncio.sleep(0)
    outer.cancel()
    await asyncio.sleep(0.1)
    outer.cancel()  # a second cancel while the helper is being ended
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(outer, 10)
    assert ended.is_set() and helper.done()
