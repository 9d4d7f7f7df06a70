"""`LoopbackAdapter`: a real, in-process platform for tests and as a reference adapter.

It is a platform of its own (nothing is mocked): messages are "sent" by appending
them to a list with a platform message id, edits change the stored text, and a test
plays the user by injecting `MessageEvent`s, which go through the real runner. Its
capabilities are configurable (length limit and measure, edits, buttons, threads,
push or request/response), and sends can be scripted to fail, time out or land late,
to exercise the runner's delivery ledger.

A real adapter does the same things against its platform: normalize each update into
a `MessageEvent` (a button press becomes its `/command` data as text), hand it to
`sink.dispatch` in a task of its own, and implement `send`/`edit`/`typing` with the
platform's limits and failure modes (a chat that is gone is `permanent_failure`).
"""

from __future__ import annotations

import asyncio
import itertools
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from herald.gateway.contracts import (
    Button,
    ChatType,
    DispatchResult,
    EventSink,
    MessageEvent,
    PlatformAdapter,
    SendResult,
    StreamCallbacks,
)


@dataclass
class SentMessage:
    chat_id: str
    text: str
    message_id: str
    reply_to: str | None = None
    thread_id: str | None = None
    buttons: list[list[Button]] | None = None
    edits: list[str] = field(default_factory=list)

    @property
    def history(self) -> list[str]:
        """The text as first sent, then after each edit."""
        return [self.first_text, *self.edits]

    def __post_init__(self) -> None:
        self.first_text = self.text


@dataclass
class SendScript:
    """How one upcoming send behaves: `delay` seconds before it lands (or fails), then
    `result` (None = delivered normally)."""

    delay: float = 0.0
    result: SendResult | None = None


_INBOUND_IDS = itertools.count(1000)  # unique per process, like a platform's message ids


class LoopbackAdapter(PlatformAdapter):
    def __init__(
        self,
        name: str = "loopback",
        *,
        max_length: int = 4096,
        measure: Callable[[str], int] | None = None,
        edits: bool = True,
        buttons: bool = True,
        threads: bool = False,
        push: bool = True,
    ):
        self.name = name
        self.push_replies = push
        self._max_length = max_length
        self._measure = measure
        self._edits = edits
        self._buttons = buttons
        self._threads = threads
        self.sink: EventSink | None = None
        self.sent: list[SentMessage] = []
        self.typing_calls = 0
        self.connected = False
        self.script: deque[SendScript] = deque()
        self._ids = itertools.count(1)
        self._changed = asyncio.Condition()

    # ---- PlatformAdapter ------------------------------------------------------------------

    async def connect(self, sink: EventSink) -> None:
        self.sink = sink
        self.connected = True

    async def disconnect(self) -> None:
        self.connected = False

    def max_message_length(self, chat_id: str) -> int:
        return self._max_length

    def measure(self, text: str) -> int:
        return self._measure(text) if self._measure is not None else len(text)

    def supports_edits(self) -> bool:
        return self._edits

    def supports_buttons(self) -> bool:
        return self._buttons

    def supports_threads(self) -> bool:
        return self._threads

    async def send(
        self,
        chat_id: str,
        text: str,
        *,
        reply_to: str | None = None,
        thread_id: str | None = None,
        buttons: list[list[Button]] | None = None,
    ) -> SendResult:
        step = self.script.popleft() if self.script else SendScript()
        if step.delay:
            await asyncio.sleep(step.delay)
        if step.result is not None and not step.result.ok:
            return step.result
        if self.measure(text) > self._max_length:
            return SendResult(
                ok=False, error=f"message too long ({self.measure(text)} > {self._max_length})"
            )
        message = SentMessage(chat_id, text, str(next(self._ids)), reply_to, thread_id, buttons)
        self.sent.append(message)
        await self._notify()
        return SendResult(ok=True, message_ids=[message.message_id])

    async def edit(self, chat_id: str, message_id: str, text: str) -> SendResult:
        if not self._edits:
            return await super().edit(chat_id, message_id, text)
        for message in self.sent:
            if message.message_id == message_id and message.chat_id == chat_id:
                message.edits.append(text)
                message.text = text
                await self._notify()
                return SendResult(ok=True, message_ids=[message_id])
        return SendResult(ok=False, error=f"no message {message_id} in chat {chat_id}")

    async def typing(self, chat_id: str, thread_id: str | None = None) -> None:
        self.typing_calls += 1

    # ---- playing the user -----------------------------------------------------------------

    def event(
        self,
        text: str,
        *,
        chat_id: str = "chat-1",
        user_id: str = "user-1",
        chat_type: ChatType = "private",
        user_name: str | None = None,
        thread_id: str | None = None,
        guild_id: str | None = None,
        message_id: str | None = None,
        media: tuple[str, ...] = (),
        session_hint: str | None = None,
    ) -> MessageEvent:
        return MessageEvent(
            platform=self.name,
            chat_id=chat_id,
            user_id=user_id,
            text=text,
            chat_type=chat_type,
            thread_id=thread_id,
            message_id=message_id or str(next(_INBOUND_IDS)),
            user_name=user_name,
            guild_id=guild_id,
            media=media,
            session_hint=session_hint,
        )

    async def inject(
        self, text_or_event: str | MessageEvent, *, stream: StreamCallbacks | None = None, **kw: Any
    ) -> DispatchResult:
        """Deliver one inbound message and wait for the runner's answer."""
        if self.sink is None:
            raise RuntimeError("the loopback adapter is not connected")
        event = (
            text_or_event
            if isinstance(text_or_event, MessageEvent)
            else self.event(text_or_event, **kw)
        )
        return await self.sink.dispatch(event, self, stream=stream)

    def inject_soon(
        self, text_or_event: str | MessageEvent, **kw: Any
    ) -> asyncio.Task[DispatchResult]:
        """Like `inject`, in a task of its own (as a real adapter dispatches)."""
        return asyncio.ensure_future(self.inject(text_or_event, **kw))

    # ---- looking at what was said ---------------------------------------------------------

    def texts(self, chat_id: str | None = None) -> list[str]:
        return [m.text for m in self.sent if chat_id is None or m.chat_id == chat_id]

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    async def wait_for(
        self, predicate: Callable[[LoopbackAdapter], bool], timeout: float = 10.0
    ) -> None:
        """Wait until `predicate(self)` holds after a send or an edit."""

        async def waiting() -> None:
            async with self._changed:
                await self._changed.wait_for(lambda: predicate(self))

        await asyncio.wait_for(waiting(), timeout)

    async def wait_for_text(self, fragment: str, timeout: float = 10.0) -> SentMessage:
        await self.wait_for(lambda a: any(fragment in m.text for m in a.sent), timeout)
        return next(m for m in self.sent if fragment in m.text)


__all__ = ["LoopbackAdapter", "SendScript", "SentMessage"]
