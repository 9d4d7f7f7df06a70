"""The email adapter's own reconnecting, on a real Dovecot behind a TCP fault proxy.

The watchdog restarts a link that went quiet; between restarts the adapter reconnects
by itself, backing off while the server keeps failing. A session that got as far as
its folder was a working link: its end starts the back-off afresh.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("aioimaplib")

from herald.config.schema_email import EmailPlatformConfig
from herald.gateway.platforms.email.adapter import EmailAdapter
from herald.testing.dovecot import DovecotServer, DovecotUnavailable
from herald.testing.tcp_fault_proxy import TcpFaultProxy

PASSWORD = "imap-pass-for-reconnect-tests"

pytestmark = pytest.mark.slow


class QuietSink:
    """The runner's side, for a test where no mail arrives."""

    def record_inbound(self, platform: str, event_id: str) -> str:
        return "new"

    async def dispatch(self, event: Any, adapter: Any, *, stream: Any = None) -> Any:
        raise AssertionError(f"no mail was sent, yet {event!r} was dispatched")


@pytest.fixture
def proxy(tmp_path: Path) -> Iterator[TcpFaultProxy]:
    try:
        server = DovecotServer(tmp_path / "dovecot", {"herald": PASSWORD}).start()
    except DovecotUnavailable as exc:
        pytest.skip(f"no IMAP server: {exc}")
    refusal = b"* BYE [UNAVAILABLE] Too many connections, come back later\r\n"
    with TcpFaultProxy(server.host, server.port, refusal=refusal) as fault_proxy:
        yield fault_proxy
    server.stop()


def adapter_via(proxy: TcpFaultProxy, tmp_path: Path) -> EmailAdapter:
    config = EmailPlatformConfig(
        enabled=True,
        address="herald@example.org",
        username="herald",
        allowed_users=["owner@example.org"],
        imap_host=proxy.host,
        imap_port=proxy.port,
        imap_security="none",
        smtp_host="127.0.0.1",
    )
    return EmailAdapter(
        config, PASSWORD, state_path=tmp_path / "email.json", attachments_dir=tmp_path / "att"
    )


async def test_a_server_that_turns_the_adapter_away_is_named_without_a_traceback(
    proxy: TcpFaultProxy, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    gc.collect()  # earlier tests' garbage on this worker is theirs: collect it first
    caplog.clear()
    proxy.storm(True)
    adapter = adapter_via(proxy, tmp_path)
    caplog.set_level(logging.WARNING)
    await adapter.connect(QuietSink())  # type: ignore[arg-type]
    try:
        while proxy.accepted < 2:  # turned away twice: the first refusal was handled
            await asyncio.sleep(0.02)
    finally:
        await adapter.disconnect()
    gc.collect()  # an unretrieved task error is logged when the task is collected
    health = adapter.health.assess()
    assert "BYE [UNAVAILABLE] Too many connections" in str(health.last_error)
    ours = [
        r.getMessage()
        for r in caplog.records
        if r.name == "asyncio" and "imap" in (r.getMessage() + str(r.exc_info)).lower()
    ]
    assert ours == []


async def test_a_link_that_worked_reconnects_without_the_back_off_of_older_failures(
    proxy: TcpFaultProxy, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    adapter = adapter_via(proxy, tmp_path)
    caplog.set_level(logging.WARNING, logger="herald.gateway.platforms.email.adapter")
    await adapter.connect(QuietSink())  # type: ignore[arg-type]
    try:
        await asyncio.wait_for(adapter.connected.wait(), 30)
        for _ in range(4):  # each cut ends a session that worked
            assert proxy.drop_now() == 1
            while adapter.connected.is_set():
                await asyncio.sleep(0.02)
            await asyncio.wait_for(adapter.connected.wait(), 60)
    finally:
        await adapter.disconnect()
    # read from the text: a redacting filter (the gateway's logging) may have folded the
    # arguments into the message already
    waits = [
        float(found.group(1))
        for r in caplog.records
        if r.name == "herald.gateway.platforms.email.adapter"
        and (found := re.search(r"again in (\d+(?:\.\d+)?) s", r.getMessage()))
    ]
    assert waits == [1.0, 1.0, 1.0, 1.0], waits


async def test_a_session_that_swallows_a_cancel_still_stops_at_once(
    proxy: TcpFaultProxy, tmp_path: Path
) -> None:
    """Python 3.11's `asyncio.wait_for` returns the result that arrives together with a
    cancel and drops the cancel: a stop that came while a command was answered let the
    session go on into IDLE and the stop waited out the IDLE (80 s in a loaded test
    run; up to idle_seconds + 60 with the defaults). The session here swallows its
    first cancel the same way, on a real connection."""
    adapter = adapter_via(proxy, tmp_path)
    swallowed, ended = asyncio.Event(), asyncio.Event()
    real_converse = adapter._converse

    async def converse(client: Any) -> None:
        try:
            await real_converse(client)
        except asyncio.CancelledError:
            swallowed.set()  # as wait_for does when the answer came with the cancel
            await asyncio.sleep(3600)  # then the next wait: an IDLE that runs its course
        finally:
            ended.set()

    adapter._converse = converse  # type: ignore[method-assign]
    await adapter.connect(QuietSink())  # type: ignore[arg-type]
    await asyncio.wait_for(adapter.connected.wait(), 30)
    stopping = asyncio.ensure_future(adapter.disconnect())
    await asyncio.wait({stopping}, timeout=10)  # not wait_for: that cancel is not the test
    assert stopping.done(), "the stop waited on a session that had swallowed its cancel"
    assert swallowed.is_set() and ended.is_set()
