"""The gateway's contracts: what every platform's message becomes, what an adapter can
do, and how adapters hand messages to the runner.

Platform differences live behind `PlatformAdapter` capability queries (DESIGN: no
if-platform chains). An adapter turns its platform's updates into `MessageEvent`s
and calls `EventSink.dispatch`; the runner answers push platforms (Telegram) through
`adapter.send`, while request/response platforms (the HTTP API, webhooks without a
target) take the reply from the returned `DispatchResult`.
"""

from __future__ import annotations

import asyncio
import logging
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from herald.gateway.health import HealthRecorder, Rhythm

log = logging.getLogger(__name__)

ChatType = Literal["private", "group", "channel"]
InboundVerdict = Literal["new", "seen"]
MediaKind = Literal["image", "audio", "file"]


@dataclass(frozen=True)
class InboundFile:
    """A file someone sent with a message (a photo, a voice note, a document).

    An adapter hands it over either saved already (`path`, written through
    `herald.gateway.media.receive_file`) or as a `fetch` the runner calls after the
    sender is authorized, so nobody unauthorized can fill the workdir. The runner
    (`herald.gateway.media`) turns images into the turn's image inputs and voice notes
    into its text; other files stay notes the model can read."""

    name: str  # the platform's file name (made safe before it is written)
    mime: str = "application/octet-stream"
    size: int | None = None  # bytes, when the platform states it up front
    voice: bool = False  # recorded as a voice note (not a music file)
    path: str | None = None  # where it was saved; None until fetched
    fetch: Callable[[], Awaitable[bytes]] | None = field(default=None, compare=False, repr=False)

    @property
    def kind(self) -> MediaKind:
        major = self.mime.split("/", 1)[0].lower()
        if major == "image":
            return "image"
        if major == "audio" or self.voice:
            return "audio"
        return "file"


@dataclass(frozen=True)
class MessageEvent:
    """One inbound message, normalized across platforms."""

    platform: str  # adapter name: "telegram", "api", "webhook", …
    chat_id: str
    user_id: str
    text: str
    chat_type: ChatType = "private"
    thread_id: str | None = None  # forum topic / thread, where the platform has them
    message_id: str | None = None
    reply_to: str | None = None  # the message this one answers
    user_name: str | None = None
    guild_id: str | None = None  # a server/workspace grouping chats, where it exists
    media: tuple[str, ...] = ()  # short notes describing attachments ("photo 800x600", …)
    files: tuple[InboundFile, ...] = ()  # the attachments themselves (herald.gateway.media)
    session_hint: str | None = None  # an explicit session choice (API `user` field / header)
    # Who sent it (a name under config `identities`); set by entrances that authenticate
    # their callers themselves (the API's keys). None: resolved from the account later.
    identity: str | None = None
    # The platform's id of the delivery itself (Telegram update_id, Slack event_id, a
    # Discord message id): what the inbound ledger dedupes replays by. None: the platform
    # has no replays (a request answered in its own response).
    event_id: str | None = None
    raw: Any = field(default=None, compare=False, repr=False)

    @property
    def is_command(self) -> bool:
        return self.text.lstrip().startswith("/")


@dataclass(frozen=True)
class Button:
    label: str
    data: str  # opaque callback data the adapter hands back as a `/command` text


@dataclass
class SendResult:
    ok: bool
    message_ids: list[str] = field(default_factory=list)  # one per part sent
    permanent_failure: bool = False  # chat gone, bot removed: never retry this target
    error: str | None = None


@dataclass(frozen=True)
class OutgoingFile:
    """A file a turn sends to its chat: read once, after the gates, through the session's
    environment (the file may live in a container or on another host), so what the gates
    judged is what is uploaded, whatever happens to the path afterwards."""

    name: str  # a plain base name (herald.gateway.inbox.safe_file_name)
    data: bytes = field(repr=False)
    mime: str = "application/octet-stream"
    voice: bool = False  # a spoken reply: a voice message where the platform has them


def cannot_send_files(platform: str) -> str:
    return (
        f"{platform} cannot send files: this platform has no file uploads in Herald; "
        "tell the user where the file is instead"
    )


@dataclass(frozen=True)
class StreamCallbacks:
    """For request/response adapters that stream (the API's SSE)."""

    on_text_delta: Callable[[str], None] | None = None


@dataclass
class DispatchResult:
    status: Literal[
        "replied",  # a turn ran; `text` is the reply
        "command",  # a slash command answered; `text` is its output
        "queued",  # busy: kept to run after the current turn
        "steered",  # busy: delivered to the running turn
        "interrupted",  # busy: the running turn was interrupted for this one
        "ignored",  # unauthorized or empty; nothing said back
        "pairing",  # an unknown user got a pairing code; `text` is the notice
        "error",  # the turn failed; `text` is a short human sentence
    ]
    text: str = ""
    session_id: str | None = None
    exit_reason: str | None = None
    usage: dict[str, int] = field(default_factory=dict)


class EventSink(Protocol):
    """The runner, as adapters see it."""

    def record_inbound(self, platform: str, event_id: str) -> InboundVerdict:
        """Record a platform event before acknowledging it to the platform (confirming
        a poll offset, acking a socket envelope, answering an HTTP event with 200).
        "seen": this event was already taken (answered, being answered, or its turn is
        resumed after a restart): acknowledge it and drop it. Durable across restarts."""
        ...

    async def dispatch(
        self,
        event: MessageEvent,
        adapter: PlatformAdapter,
        *,
        stream: StreamCallbacks | None = None,
    ) -> DispatchResult: ...


class PlatformAdapter(ABC):
    """One entrance. Capability queries, never `if platform == …` in the runner."""

    name: str
    push_replies: bool = True  # False: the caller takes the reply from dispatch()

    @abstractmethod
    async def connect(self, sink: EventSink) -> None:
        """Start receiving (polling, HTTP server, …) and hand every message to `sink`."""

    @abstractmethod
    async def disconnect(self) -> None: ...

    async def reconnect(self, sink: EventSink) -> None:
        """The watchdog found the link dead: get a fresh one. Only the receiving side is
        rebuilt where the adapter can manage that; dispatches already handed to the
        runner (turns in flight) must keep running and keep their way to reply.
        The default is a full disconnect and connect."""
        await self.disconnect()
        await self.connect(sink)

    # ---- liveness -------------------------------------------------------------------------

    def expected_rhythm(self) -> Rhythm:
        """How often the platform must be heard from (see `herald.gateway.health`).
        Adapters that hold a connection (long poll, websocket) must override this."""
        return Rhythm.served()

    # ---- plumbing every adapter that pushes events shares ---------------------------------

    def record_event(self, sink: EventSink | None, event_id: str | None) -> str:
        """The inbound ledger's verdict on `event_id` ("new" or "seen"), recorded before
        the platform is told the event arrived. With no ledger (an adapter tested alone) or
        no id, "new"; if the ledger fails, "new" too: answer rather than lose it."""
        record = getattr(sink, "record_inbound", None)
        if record is None or event_id is None:
            return "new"
        try:
            return str(record(self.name, event_id))
        except Exception as exc:
            log.error("%s: could not record event %s: %s", self.name, event_id, exc)
            return "new"

    def spawn_dispatch(
        self, sink: EventSink | None, event: MessageEvent, tasks: set[asyncio.Task[None]]
    ) -> None:
        """Hand `event` to `sink` in a task of its own, kept in `tasks` until it ends (so a
        disconnect can wait for the dispatches in flight)."""
        task = asyncio.get_running_loop().create_task(
            self._dispatch_to(sink, event), name=f"{self.name}:{event.chat_id}"
        )
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    async def _dispatch_to(self, sink: EventSink | None, event: MessageEvent) -> None:
        if sink is None:
            return
        try:
            await sink.dispatch(event, self)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("%s: dispatching a message from %s failed", self.name, event.chat_id)

    @property
    def health(self) -> HealthRecorder:
        """This adapter's recorder: call `received()`, `sent()`, `error(reason)`,
        `reconnecting(reason)` and `heartbeat_ack()` on it as traffic happens."""
        recorder = self.__dict__.get("_health_recorder")
        if recorder is None:
            recorder = HealthRecorder(self.name, self.expected_rhythm())
            self.__dict__["_health_recorder"] = recorder
        return recorder

    # ---- capabilities ---------------------------------------------------------------------

    @abstractmethod
    def max_message_length(self, chat_id: str) -> int:
        """In the platform's own units (Telegram counts UTF-16 code units)."""

    def measure(self, text: str) -> int:
        """Length of `text` in the units `max_message_length` uses."""
        return len(text)

    def supports_edits(self) -> bool:
        return False

    def supports_buttons(self) -> bool:
        return False

    def supports_threads(self) -> bool:
        return False

    def supports_files(self) -> bool:
        """Whether `send_file` can put a file in a chat of this platform."""
        return False

    def markdown_flavour(self) -> str:
        return "plain"  # plain | commonmark | telegram-html | …

    # ---- output ---------------------------------------------------------------------------

    @abstractmethod
    async def send(
        self,
        chat_id: str,
        text: str,
        *,
        reply_to: str | None = None,
        thread_id: str | None = None,
        buttons: list[list[Button]] | None = None,
    ) -> SendResult:
        """Send one message that already fits `max_message_length` (the runner splits)."""

    async def send_file(
        self,
        chat_id: str,
        file: OutgoingFile,
        *,
        caption: str | None = None,
        reply_to: str | None = None,
        thread_id: str | None = None,
    ) -> SendResult:
        """Upload `file` to the chat (in `thread_id`), with `caption` beside it. Adapters
        that override this also answer True to `supports_files`; callers ask that first."""
        return SendResult(ok=False, error=cannot_send_files(self.name))

    async def edit(self, chat_id: str, message_id: str, text: str) -> SendResult:
        return SendResult(ok=False, error=f"{self.name} cannot edit messages")

    async def typing(self, chat_id: str, thread_id: str | None = None) -> None:  # noqa: B027
        """Show a typing indicator where the platform has one."""


AsyncCallback = Callable[[], Awaitable[None]]
