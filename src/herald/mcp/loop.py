"""One asyncio event loop on its own thread, so synchronous tool handlers can use the
async MCP SDK: coroutines are submitted and waited on through concurrent futures."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class CallCancelled(Exception):
    """The turn was interrupted while the call ran; the request was cancelled."""


class CallTimedOut(Exception):
    """The call did not finish in time; the request was cancelled."""


class LoopThread:
    def __init__(self, name: str = "herald-mcp") -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def run(
        self,
        coro: Coroutine[Any, Any, T],
        *,
        timeout: float | None = None,
        cancel: threading.Event | None = None,
    ) -> T:
        """Run `coro` on the loop and wait; an interrupt or the timeout cancels it (the
        task is cancelled on the loop, which cancels the request it was making)."""
        future = self.submit(coro)
        deadline = None if timeout is None else self.loop.time() + timeout
        while True:
            try:
                return future.result(0.05)
            except concurrent.futures.TimeoutError:
                pass
            if cancel is not None and cancel.is_set():
                future.cancel()
                raise CallCancelled()
            if deadline is not None and self.loop.time() >= deadline:
                future.cancel()
                raise CallTimedOut()

    def close(self, timeout: float = 5.0) -> None:
        if self.loop.is_closed():
            return
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout)
