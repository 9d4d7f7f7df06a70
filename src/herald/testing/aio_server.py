"""An aiohttp application served on 127.0.0.1 from a thread of its own, for the fakes
that speak websockets (Discord's gateway, Slack's Socket Mode) as well as HTTP.

The server runs its own event loop, so a test (sync or asyncio) and the client under
test never share a loop with it: `call(fn)` runs `fn` on the server's loop and waits,
`submit(coro)` schedules a coroutine there. A restart keeps the port, so a client that
reconnects finds the server where it was.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from aiohttp import web

T = TypeVar("T")


class LoopThread:
    """An event loop of its own in a daemon thread: `start(setup)` runs `setup()` on it
    (its error is raised to the caller) and keeps the loop running, `stop(shutdown)` runs
    `shutdown()` there and ends the thread, `call(fn)` runs `fn` there and waits."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self._loop is not None

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            raise RuntimeError(f"the {self.name} is not running; call start() first")
        return self._loop

    def start(self, setup: Callable[[], Awaitable[None]]) -> None:
        if self._loop is not None:
            raise RuntimeError(f"the {self.name} is already running")
        loop = asyncio.new_event_loop()
        ready = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(setup())
            except BaseException as error:  # surfaced to start()'s caller
                failure.append(error)
                ready.set()
                loop.close()
                return
            ready.set()
            loop.run_forever()
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

        self._loop = loop
        self._thread = threading.Thread(target=run, name=self.name, daemon=True)
        self._thread.start()
        ready.wait(10)
        if failure:
            self._loop = self._thread = None
            raise failure[0]

    def stop(self, shutdown: Callable[[], Awaitable[None]]) -> bool:
        """Run `shutdown()` on the loop, then end it; False if it was not running."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return False
        try:
            asyncio.run_coroutine_threadsafe(_as_coroutine(shutdown()), loop).result(10)
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(5)
            self._loop = self._thread = None
        return True

    def call(self, fn: Callable[[], T], timeout: float = 10.0) -> T:
        """Run `fn` on the loop and return its result."""

        async def run() -> T:
            return fn()

        return asyncio.run_coroutine_threadsafe(run(), self.loop).result(timeout)

    def run(self, coro: Awaitable[T], timeout: float = 10.0) -> T:
        """Run a coroutine on the loop and return its result."""
        return asyncio.run_coroutine_threadsafe(_as_coroutine(coro), self.loop).result(timeout)

    def submit(self, coro: Awaitable[Any]) -> None:
        asyncio.run_coroutine_threadsafe(_as_coroutine(coro), self.loop)


class AioServerThread:
    def __init__(
        self, make_app: Callable[[], web.Application], host: str = "127.0.0.1", port: int = 0
    ) -> None:
        self._make_app = make_app
        self.host = host
        self.port = port
        self._thread = LoopThread("fake server")
        self._runner: web.AppRunner | None = None

    @property
    def running(self) -> bool:
        return self._thread.running

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        return self._thread.loop

    def start(self) -> None:
        self._thread.start(self._serve)

    async def _serve(self) -> None:
        runner = web.AppRunner(self._make_app(), handle_signals=False, shutdown_timeout=0.2)
        await runner.setup()
        site = web.TCPSite(runner, self.host, self.port, reuse_address=True)
        await site.start()
        server = site._server  # aiohttp keeps the asyncio server here; the port is on it
        if server is not None and server.sockets:
            self.port = int(server.sockets[0].getsockname()[1])
        self._runner = runner

    def stop(self, before: Callable[[], Awaitable[None]] | None = None) -> None:
        """Stop serving; `before` runs on the server's loop first (to close websockets)."""
        runner = self._runner

        async def shutdown() -> None:
            if before is not None:
                await before()
            if runner is not None:
                await runner.cleanup()

        if self._thread.stop(shutdown):
            self._runner = None

    def call(self, fn: Callable[[], T], timeout: float = 10.0) -> T:
        """Run `fn` on the server's loop and return its result."""
        return self._thread.call(fn, timeout)

    def submit(self, coro: Awaitable[Any]) -> None:
        self._thread.submit(coro)


async def _as_coroutine(awaitable: Awaitable[Any]) -> Any:
    return await awaitable


class PeriodicDrops:
    """A fake's "the server cuts every connection every N seconds" fault mode: the fake
    defines `drop_all()`; `drop_every(seconds)` starts it on a timer, `None` stops it."""

    _dropper: asyncio.Task[None] | None = None

    async def drop_all(self) -> int:
        raise NotImplementedError

    def drop_every(self, seconds: float | None) -> None:
        if self._dropper is not None:
            self._dropper.cancel()
            self._dropper = None
        if seconds:
            self._dropper = asyncio.ensure_future(self._drop_loop(seconds))

    async def _drop_loop(self, seconds: float) -> None:
        while True:
            await asyncio.sleep(seconds)
            await self.drop_all()
