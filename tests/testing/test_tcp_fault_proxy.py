"""The TCP fault proxy, in front of a real echo server on loopback."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import pytest

from herald.testing.tcp_fault_proxy import TcpFaultProxy


class Echo:
    """An upstream that echoes each line and remembers what reached it."""

    def __init__(self) -> None:
        self.heard: list[bytes] = []
        self.connections = 0
        self.server: asyncio.Server | None = None
        self.port = 0

    async def start(self) -> Echo:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = int(self.server.sockets[0].getsockname()[1])
        return self

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while line := await reader.readline():
                self.heard.append(line)
                if line == b"quit\n":
                    break
                writer.write(b"echo " + line)
                await writer.drain()
        except OSError:
            pass
        writer.close()


@pytest.fixture
async def echo() -> AsyncIterator[Echo]:
    server = await Echo().start()
    yield server
    assert server.server is not None
    server.server.close()


@pytest.fixture
async def proxy(echo: Echo) -> AsyncIterator[TcpFaultProxy]:
    fault_proxy = TcpFaultProxy("127.0.0.1", echo.port, refusal=b"421 go away\r\n").start()
    yield fault_proxy
    fault_proxy.stop()


async def open_via(proxy: TcpFaultProxy) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.open_connection(proxy.host, proxy.port)


async def until_ended(reader: asyncio.StreamReader) -> None:
    """Returns once the connection is closed or cut (EOF or a reset); a link still
    open fails the test (TimeoutError)."""
    with contextlib.suppress(ConnectionResetError):
        await asyncio.wait_for(reader.read(), 10)


async def held_back(proxy: TcpFaultProxy) -> None:
    while proxy.held == 0:
        await asyncio.sleep(0.01)


async def test_bytes_pass_both_ways_and_a_close_passes_on(proxy: TcpFaultProxy, echo: Echo) -> None:
    reader, writer = await open_via(proxy)
    writer.write(b"hello\n")
    assert await asyncio.wait_for(reader.readline(), 10) == b"echo hello\n"
    writer.write(b"quit\n")  # the server closes: the client reads the end
    assert await asyncio.wait_for(reader.read(), 10) == b""
    assert echo.heard == [b"hello\n", b"quit\n"]
    writer.close()


async def test_silence_holds_the_bytes_and_ending_it_cuts_what_was_held(
    proxy: TcpFaultProxy, echo: Echo
) -> None:
    reader, writer = await open_via(proxy)
    writer.write(b"before\n")
    assert await asyncio.wait_for(reader.readline(), 10) == b"echo before\n"
    proxy.silence(True)
    writer.write(b"during\n")
    await asyncio.wait_for(held_back(proxy), 10)  # the proxy has read it, and holds it
    proxy.silence(False)
    await until_ended(reader)
    assert echo.heard == [b"before\n"]  # what was written while silent never got there
    fresh_reader, fresh_writer = await open_via(proxy)
    fresh_writer.write(b"after\n")
    assert await asyncio.wait_for(fresh_reader.readline(), 10) == b"echo after\n"
    fresh_writer.close()


async def test_a_storm_cuts_live_links_and_turns_new_ones_away(
    proxy: TcpFaultProxy, echo: Echo
) -> None:
    reader, writer = await open_via(proxy)
    writer.write(b"one\n")
    assert await asyncio.wait_for(reader.readline(), 10) == b"echo one\n"
    proxy.storm(True)
    await until_ended(reader)
    refused_reader, refused_writer = await open_via(proxy)
    assert await asyncio.wait_for(refused_reader.read(), 10) == b"421 go away\r\n"
    assert echo.connections == 1  # the server never heard of the refused one
    refused_writer.close()
    proxy.storm(False)
    again_reader, again_writer = await open_via(proxy)
    again_writer.write(b"two\n")
    assert await asyncio.wait_for(again_reader.readline(), 10) == b"echo two\n"
    again_writer.close()


async def test_a_drop_cuts_every_live_connection_and_new_ones_work(
    proxy: TcpFaultProxy, echo: Echo
) -> None:
    links = [await open_via(proxy) for _ in range(2)]
    for reader, writer in links:
        writer.write(b"hi\n")
        assert await asyncio.wait_for(reader.readline(), 10) == b"echo hi\n"
    assert proxy.drop_now() == 2
    for reader, _ in links:
        await until_ended(reader)
    reader, writer = await open_via(proxy)
    writer.write(b"later\n")
    assert await asyncio.wait_for(reader.readline(), 10) == b"echo later\n"
    writer.close()
