"""Live updates for the web chat: one event stream per chat, replayable by event id.

Every event a chat produces (streamed text, messages the runner sends or edits,
the end of a turn) gets the next id of that chat and is kept in a bounded buffer.
A browser that reconnects sends the last id it saw (``Last-Event-ID``) and receives
only what came after it, so a dropped connection never duplicates or loses text.
Events are published from the gateway's event loop only.
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

KEEP_EVENTS = 2000  # per chat; a reconnect older than this starts from a fresh snapshot
KEEPALIVE_SECONDS = 15.0


@dataclass
class _Chat:
    next_id: int = 1
    events: deque[tuple[int, str, dict[str, Any]]] = field(
        default_factory=lambda: deque(maxlen=KEEP_EVENTS)
    )
    changed: asyncio.Event = field(default_factory=asyncio.Event)


class ChatEvents:
    def __init__(self) -> None:
        self._chats: dict[str, _Chat] = {}

    def _chat(self, chat_id: str) -> _Chat:
        chat = self._chats.get(chat_id)
        if chat is None:
            chat = self._chats[chat_id] = _Chat()
        return chat

    def publish(self, chat_id: str, kind: str, data: dict[str, Any]) -> int:
        chat = self._chat(chat_id)
        event_id = chat.next_id
        chat.next_id += 1
        chat.events.append((event_id, kind, data))
        chat.changed.set()
        chat.changed = asyncio.Event()
        return event_id

    def last_id(self, chat_id: str) -> int:
        return self._chat(chat_id).next_id - 1

    def since(self, chat_id: str, after: int) -> list[tuple[int, str, dict[str, Any]]]:
        return [e for e in self._chat(chat_id).events if e[0] > after]

    async def stream(self, chat_id: str, after: int) -> AsyncIterator[str]:
        """Server-sent events after ``after``, forever (the caller stops on disconnect)."""
        while True:
            chat = self._chat(chat_id)
            waiter = chat.changed
            for event_id, kind, data in self.since(chat_id, after):
                after = event_id
                yield format_sse(event_id, kind, data)
            try:
                await asyncio.wait_for(waiter.wait(), KEEPALIVE_SECONDS)
            except TimeoutError:
                yield ": keep-alive\n\n"


def format_sse(event_id: int, kind: str, data: dict[str, Any]) -> str:
    body = json.dumps(data, ensure_ascii=False)
    return f"id: {event_id}\nevent: {kind}\ndata: {body}\n\n"


__all__ = ["ChatEvents", "format_sse"]
