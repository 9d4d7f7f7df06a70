"""A fault-injecting TCP proxy for tests: a client under test connects to it, it
forwards the bytes to a real server (Dovecot's IMAP port, an SMTP server, anything
that speaks over TCP) and back, and it can break the link the ways networks and
overloaded servers do, at the byte level, whatever the protocol:

- `silence(on)`: bytes are held both ways while connections stay open (a NAT that
  dropped its mapping, a server that hangs); new connections are accepted and held
  too. Turned off, every connection that was held is cut, and new ones work again.
- `drop_connections_every(seconds)`: every live connection is cut every few seconds
  (None stops it); `drop_all()` cuts them once.
- `storm(on)`: live connections are cut, and each new one gets `refusal` (a
  protocol's "go away" line, such as IMAP's ``* BYE [UNAVAILABLE]`` or SMTP's
  ``421``) and is closed at once, before the server hears of it.

The proxy runs its own event loop in a thread, so a test (sync or asyncio) and the
client under test never share a loop with it; the switches may be called from any
thread.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import TypeVar

from herald.testing.aio_server import LoopThread, PeriodicDrops

T = TypeVar("T")
_CHUNK = 64 * 1024


class _Link:
    """One client connection and its connection to the server."""

    def __init__(self, client: asyncio.StreamWriter) -> None:
        self.client = client
        self.server: asyncio.StreamWriter | None = None
        self.tasks: list[asyncio.Task[None]] = []

    def cut(self) -> None:
        for writer in (self.client, self.server):
            if writer is not None:
                writer.transport.abort()
        for task in self.tasks:
            task.cancel()


class TcpFaultProxy(PeriodicDrops):
    def __init__(
        self,
        upstream_host: str,
        upstream_port: int,
        *,
        refusal: bytes = b"",
        host: str = "127.0.0.1",
    ) -> None:
        self.upstream = (upstream_host, upstream_port)
        self.refusal = refusal
        self.host = host
        self.port = 0
        self.accepted = 0  # connections accepted so far (tests, diagnostics)
        self._held = 0  # reads held back by silence right now
        self._links: set[_Link] = set()
        self._silent = False
        self._storm = False
        self._flowing: asyncio.Event | None = None
        self._thread = LoopThread("tcp fault proxy")
        self._server: asyncio.Server | None = None

    # ---- life cycle ------------------------------------------------------------------------

    def start(self) -> TcpFaultProxy:
        self._thread.start(self._listen)
        return self

    async def _listen(self) -> None:
        self._flowing = asyncio.Event()
        self._flowing.set()
        self._server = await asyncio.start_server(self._accept, self.host, self.port)
        self.port = int(self._server.sockets[0].getsockname()[1])

    def stop(self) -> None:
        async def shutdown() -> None:
            self.drop_every(None)
            if self._server is not None:
                self._server.close()
            await self.drop_all()
            assert self._flowing is not None
            self._flowing.set()

        self._thread.stop(shutdown)

    def __enter__(self) -> TcpFaultProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def call(self, fn: Callable[[], T], timeout: float = 10.0) -> T:
        """Run `fn` on the proxy's loop and return its result."""
        return self._thread.call(fn, timeout)

    # ---- fault switches (any thread) -------------------------------------------------------

    def silence(self, on: bool) -> None:
        def switch() -> None:
            assert self._flowing is not None
            self._silent = on
            if on:
                self._flowing.clear()
                return
            for link in list(self._links):  # whatever hung is cut
                link.cut()
            self._flowing.set()

        self.call(switch)

    def storm(self, on: bool) -> None:
        def switch() -> None:
            self._storm = on
            if on:
                for link in list(self._links):
                    link.cut()

        self.call(switch)

    def drop_connections_every(self, seconds: float | None) -> None:
        self.call(lambda: self.drop_every(seconds))

    def drop_now(self) -> int:
        """Cut every live connection once (from any thread); returns how many."""
        return self._thread.run(self.drop_all())

    async def drop_all(self) -> int:
        links = list(self._links)
        for link in links:
            link.cut()
        return len(links)

    @property
    def live_connections(self) -> int:
        return self.call(lambda: len(self._links))

    @property
    def held(self) -> int:
        """How many reads (data or a close) silence is holding back right now."""
        return self.call(lambda: self._held)

    # ---- the proxy -------------------------------------------------------------------------

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        if self._storm:
            with contextlib.suppress(OSError):
                if self.refusal:
                    writer.write(self.refusal)
                    await writer.drain()
            if self.refusal:
                writer.close()
            else:
                writer.transport.abort()
            return
        link = _Link(writer)
        self._links.add(link)
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.upstream)
        except OSError:
            self._links.discard(link)
            writer.transport.abort()
            return
        link.server = up_writer
        link.tasks = [
            asyncio.ensure_future(self._pump(reader, up_writer, link)),
            asyncio.ensure_future(self._pump(up_reader, writer, link)),
        ]
        await asyncio.gather(*link.tasks, return_exceptions=True)
        self._links.discard(link)

    async def _pump(
        self, source: asyncio.StreamReader, target: asyncio.StreamWriter, link: _Link
    ) -> None:
        assert self._flowing is not None
        try:
            while True:
                data = await source.read(_CHUNK)
                if not self._flowing.is_set():  # silence: held here, the connection open
                    self._held += 1
                    try:
                        await self._flowing.wait()
                    finally:
                        self._held -= 1
                if not data:
                    break
                target.write(data)
                await target.drain()
        except OSError:
            link.cut()
            return
        target.close()  # a clean close passes on as one (after what was written)


__all__ = ["TcpFaultProxy"]
