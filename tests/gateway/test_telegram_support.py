"""Support for the Telegram tests (no tests of its own): a small real `EventSink` that
records what the adapter hands over, and a connected adapter on the fake Bot API."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from herald.gateway import DispatchResult, MessageEvent, PlatformAdapter, StreamCallbacks
from herald.gateway.platforms.telegram.adapter import TelegramAdapter
from herald.testing.fake_telegram import FakeTelegramServer

Responder = Callable[[MessageEvent, PlatformAdapter], Awaitable[None]]

ALICE, BOB, CAROL = 1001, 1002, 1003
GROUP = -4000000001  # a basic group
FORUM = -1002000000001  # a supergroup with topics


class RecordingSink:
    """Keeps every event in arrival order; `respond` (if set) runs inside dispatch."""

    def __init__(self, respond: Responder | None = None) -> None:
        self.events: list[MessageEvent] = []
        self.respond = respond
        self._changed = asyncio.Condition()

    async def dispatch(
        self,
        event: MessageEvent,
        adapter: PlatformAdapter,
        *,
        stream: StreamCallbacks | None = None,
    ) -> DispatchResult:
        async with self._changed:
            self.events.append(event)
            self._changed.notify_all()
        if self.respond is not None:
            await self.respond(event, adapter)
        return DispatchResult("replied")

    async def wait_for(self, n: int, timeout: float = 10.0) -> list[MessageEvent]:
        async with self._changed:
            await asyncio.wait_for(self._changed.wait_for(lambda: len(self.events) >= n), timeout)
            return list(self.events)

    async def wait_for_text(self, text: str, timeout: float = 10.0) -> MessageEvent:
        async with self._changed:
            await asyncio.wait_for(
                self._changed.wait_for(lambda: any(e.text == text for e in self.events)), timeout
            )
            return next(e for e in self.events if e.text == text)


@asynccontextmanager
async def connected(
    server: FakeTelegramServer, sink: Any, **options: Any
) -> AsyncIterator[TelegramAdapter]:
    options.setdefault("poll_timeout", 5)
    adapter = TelegramAdapter(server.token, base_url=server.base_url, **options)
    await adapter.connect(sink)
    try:
        yield adapter
    finally:
        await adapter.disconnect()
