"""Signal through a linked signal-cli daemon: its event stream in, JSON-RPC out.

signal-cli (``signal-cli -a NUMBER daemon --http=127.0.0.1:8080``) holds the Signal
account; Herald reads ``GET /api/v1/events`` (Server-Sent Events: one ``receive``
event per incoming message, a ``:`` keep-alive every 15 s) and calls
``POST /api/v1/rpc`` (``send``, ``sendTyping``). The keep-alives are the link's
heartbeat: a stream that stays open but stops sending them is dead, and the watchdog
opens a new one.

DMs and groups: a DM's chat is the sender, a group's chat is its group id. In groups
Herald answers only a message that mentions it or quotes one of its messages (unless
``mention_in_groups`` is off). Approvals are reactions: the prompt lists an emoji
per choice, and reacting with one on the prompt presses it (the gateway then checks
that the person reacting may approve). Every message is recorded in the gateway's
inbound ledger by its author and timestamp (Signal's own message identity) before it
is answered, so a replay after a reconnect is answered at most once.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import json
import logging
import mimetypes
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any

import httpx

from herald.config.schema_signal import SignalPlatformConfig
from herald.gateway.aio import end_task
from herald.gateway.approvals import REACTION_FOR, reaction_choices
from herald.gateway.contracts import (
    Button,
    EventSink,
    InboundFile,
    MessageEvent,
    OutgoingFile,
    PlatformAdapter,
    SendResult,
)
from herald.gateway.health import Rhythm
from herald.gateway.media import guess_mime

log = logging.getLogger(__name__)

SIGNAL_MAX_MESSAGE = 2000  # what Signal shows unfolded; longer is split by the gateway
_EMOJI_FOR = REACTION_FOR  # the harness reads it
_KEPT_PROMPTS = 50
_LATE_PRESS_TRIES = 50  # 5 s: a press that came back before its prompt's send answered
_FIRST_BACKOFF = 0.2  # then doubling to 30 s: a blip costs nothing, an outage little
# A group's chat id (group ids are base64 and may start with "+", like a number).
GROUP_PREFIX = "group:"


class SignalRpcError(RuntimeError):
    def __init__(self, message: str, *, permanent: bool = False) -> None:
        super().__init__(message)
        self.permanent = permanent


class SignalAdapter(PlatformAdapter):
    name = "signal"
    push_replies = True

    def __init__(self, config: SignalPlatformConfig) -> None:
        if not config.account:
            raise ValueError("gateway.platforms.signal.account is not set (Herald's number)")
        self.config = config
        self.account = config.account
        self._base = config.url.rstrip("/")
        self._client: httpx.AsyncClient | None = None
        self._stream: asyncio.Task[None] | None = None
        self._sink: EventSink | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._ids = itertools.count(1)
        # prompt timestamp -> (chat, {emoji: button data}); the newest few
        self._prompts: OrderedDict[int, tuple[str, dict[str, str]]] = OrderedDict()
        self._own: OrderedDict[int, None] = OrderedDict()
        self._prompts_in_flight = 0  # prompt sends whose timestamp has not come back yet  # timestamps of Herald's messages
        self.connected = asyncio.Event()

    # ---- lifecycle --------------------------------------------------------------------

    async def connect(self, sink: EventSink) -> None:
        if self._client is not None:
            raise RuntimeError("the Signal adapter is already connected")
        self._sink = sink
        self._client = httpx.AsyncClient(timeout=httpx.Timeout(30.0, read=None))
        try:
            await self._check()
        except ConnectionError:
            await self._client.aclose()
            self._client = None
            raise
        self._stream = asyncio.create_task(self._listen(), name="signal:events")

    async def reconnect(self, sink: EventSink) -> None:
        """A new event stream; turns in flight keep replying over JSON-RPC."""
        self._sink = sink
        self.health.reconnecting("opening a new event stream")
        await self._check()  # unreachable: the watchdog backs off and tries again
        await self._stop_stream()
        self._stream = asyncio.create_task(self._listen(), name="signal:events")

    async def disconnect(self) -> None:
        await self._stop_stream()
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=10)
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()
        self.health.stopped()

    async def _check(self) -> None:
        assert self._client is not None
        try:
            check = await self._client.get(f"{self._base}/api/v1/check", timeout=10)
        except httpx.HTTPError as exc:
            raise ConnectionError(f"signal-cli is not answering at {self._base}: {exc}") from None
        if check.status_code != 200:
            raise ConnectionError(f"signal-cli at {self._base} answered {check.status_code}")

    async def _stop_stream(self) -> None:
        stream, self._stream = self._stream, None
        if stream is not None:
            await end_task(stream)

    def expected_rhythm(self) -> Rhythm:
        keepalive = self.config.keepalive_seconds
        return Rhythm.websocket(keepalive, max(keepalive, 1.0))

    # ---- capabilities -----------------------------------------------------------------

    def max_message_length(self, chat_id: str) -> int:
        return SIGNAL_MAX_MESSAGE

    def supports_buttons(self) -> bool:
        return True  # rendered as reactions

    def supports_edits(self) -> bool:
        return True  # `send` with editTimestamp (Signal shows "edited")

    # ---- input ------------------------------------------------------------------------

    async def _listen(self) -> None:
        backoff = _FIRST_BACKOFF
        while True:
            try:
                await self._read_stream()
                backoff = _FIRST_BACKOFF
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a cut stream, a 5xx: open it again
                self.connected.clear()
                self.health.error(f"event stream: {exc}")
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 30.0)

    async def _read_stream(self) -> None:
        assert self._client is not None
        url = f"{self._base}/api/v1/events"
        async with self._client.stream("GET", url, params={"account": self.account}) as response:
            if response.status_code != 200:
                raise ConnectionError(f"signal-cli answered {response.status_code} for events")
            self.connected.set()
            self.health.connected()
            self.health.received()  # the stream opened: signal-cli is listening for us
            event, data = "", []
            async for line in response.aiter_lines():
                if line.startswith(":"):  # signal-cli's keep-alive: the stream is alive
                    self.health.heartbeat_ack()
                    self.health.received()
                    continue
                if line.startswith("event:"):
                    event = line[6:].strip()
                elif line.startswith("data:"):
                    data.append(line[5:])
                elif line == "":
                    if event == "receive" and data:
                        self.health.received()
                        self._take("\n".join(data))
                    event, data = "", []
        raise ConnectionError("signal-cli closed the event stream")

    def _take(self, payload: str) -> None:
        try:
            envelope = json.loads(payload)["envelope"]
        except (ValueError, KeyError, TypeError):
            log.warning("signal: an event that is not a message envelope was ignored")
            return
        message = envelope.get("dataMessage")
        if not isinstance(message, dict):
            return  # receipts, typing, sync messages
        author = envelope.get("sourceNumber") or envelope.get("sourceUuid") or ""
        if not author or author == self.account:
            return
        ts = int(message.get("timestamp") or envelope.get("timestamp") or 0)
        event_id = f"{author}:{ts}"
        group = (message.get("groupInfo") or {}).get("groupId")
        chat = f"{GROUP_PREFIX}{group}" if group else author
        reaction = message.get("reaction")
        if isinstance(reaction, dict):
            text = self._reaction_press(chat, reaction)
            if text is not None:
                self._dispatch_new(chat, author, envelope, group, text, event_id, ts, None, ())
            elif self._prompts_in_flight:
                # The prompt may be on its way back from signal-cli still (its timestamp
                # arrives with send's answer): look again shortly rather than drop a press.
                late = self._late_press(chat, author, envelope, group, reaction, event_id, ts)
                task = asyncio.get_running_loop().create_task(late)
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
            return
        text = str(message.get("message") or "")
        quote = message.get("quote") or {}
        quoted_herald = quote.get("authorNumber") == self.account or quote.get("author") == (
            self.account
        )
        if group and self.config.mention_in_groups:
            mentioned = any(m.get("number") == self.account for m in message.get("mentions") or [])
            if not (mentioned or quoted_herald):
                return
        files = self._files(message.get("attachments") or [], author, group, ts)
        if not text.strip() and not files:
            return
        reply_to = str(quote["id"]) if quote.get("id") else None
        self._dispatch_new(chat, author, envelope, group, text, event_id, ts, reply_to, files)

    def _dispatch_new(
        self,
        chat: str,
        author: str,
        envelope: dict[str, Any],
        group: str | None,
        text: str,
        event_id: str,
        ts: int,
        reply_to: str | None,
        files: tuple[InboundFile, ...],
    ) -> None:
        if self.record_event(self._sink, event_id) == "seen":
            return
        event = MessageEvent(
            platform=self.name,
            chat_id=chat,
            user_id=author,
            text=text,
            chat_type="group" if group else "private",
            message_id=f"{author}:{ts}",
            reply_to=reply_to,
            user_name=None,  # a profile name is whatever the sender types: never an identity
            files=files,
            event_id=event_id,
            raw=envelope,
        )
        self.spawn_dispatch(self._sink, event, self._tasks)

    async def _late_press(
        self,
        chat: str,
        author: str,
        envelope: dict[str, Any],
        group: str | None,
        reaction: dict[str, Any],
        event_id: str,
        ts: int,
    ) -> None:
        for _ in range(_LATE_PRESS_TRIES):
            await asyncio.sleep(0.1)
            text = self._reaction_press(chat, reaction)
            if text is not None:
                self._dispatch_new(chat, author, envelope, group, text, event_id, ts, None, ())
                return
            if not self._prompts_in_flight:
                return

    def _reaction_press(self, chat: str, reaction: dict[str, Any]) -> str | None:
        if reaction.get("isRemove"):
            return None
        target = int(reaction.get("targetSentTimestamp") or 0)
        prompt = self._prompts.get(target)
        if prompt is None or prompt[0] != chat:
            return None  # a reaction to anything else is just a reaction
        return prompt[1].get(str(reaction.get("emoji")))

    def _files(
        self, attachments: list[dict[str, Any]], author: str, group: str | None, ts: int
    ) -> tuple[InboundFile, ...]:
        """The message's attachments, each read from signal-cli (``getAttachment``) only
        when the runner asks, after it authorized the sender: a stranger's photo never
        reaches Herald's workdir. A voice note is an audio attachment signal-cli marks
        ``isVoiceNote``."""
        files = []
        for number, a in enumerate(attachments):
            attachment_id = str(a.get("id") or "")
            if not attachment_id:
                continue
            mime = guess_mime(str(a.get("filename") or ""), a.get("contentType"))
            voice = bool(a.get("isVoiceNote"))
            suffix = mimetypes.guess_extension(mime) or ""
            kind = "voice" if voice else "signal"
            name = str(a.get("filename") or f"{kind}-{ts}-{number}{suffix}")
            size = a.get("size")
            files.append(
                InboundFile(
                    name,
                    mime,
                    int(size) if isinstance(size, int) else None,
                    voice,
                    fetch=self._fetcher(attachment_id, author, group),
                )
            )
        return tuple(files)

    def _fetcher(
        self, attachment_id: str, author: str, group: str | None
    ) -> Callable[[], Awaitable[bytes]]:
        where = {"groupId": group} if group else {"recipient": author}

        async def fetch() -> bytes:
            result = await self._rpc("getAttachment", {"id": attachment_id, **where})
            data = (result or {}).get("data") if isinstance(result, dict) else None
            if not isinstance(data, str):
                raise SignalRpcError("signal-cli answered getAttachment without data")
            return base64.b64decode(data)

        return fetch

    # ---- output -----------------------------------------------------------------------

    async def send(
        self,
        chat_id: str,
        text: str,
        *,
        reply_to: str | None = None,
        thread_id: str | None = None,
        buttons: list[list[Button]] | None = None,
    ) -> SendResult:
        choices: dict[str, str] = {}
        if buttons:
            choices, how = reaction_choices(buttons)
            text = f"{text}\n\n{how}"
        params: dict[str, Any] = {"message": text, **self._target(chat_id)}
        if reply_to and ":" in reply_to:
            author, _, ts = reply_to.rpartition(":")
            if ts.isdigit():
                params["quoteTimestamp"] = int(ts)
                params["quoteAuthor"] = author
        self._prompts_in_flight += bool(choices)
        try:
            result = await self._rpc("send", params)
        except SignalRpcError as exc:
            self.health.error(f"send: {exc}")
            return SendResult(ok=False, permanent_failure=exc.permanent, error=str(exc))
        finally:
            self._prompts_in_flight -= bool(choices)
        ts = int((result or {}).get("timestamp") or 0)
        self.health.sent()
        self._remember(self._own, ts, None)
        if choices:
            self._remember(self._prompts, ts, (chat_id, choices))
        return SendResult(ok=True, message_ids=[f"{self.account}:{ts}"])

    def supports_files(self) -> bool:
        return True

    async def send_file(
        self,
        chat_id: str,
        file: OutgoingFile,
        *,
        caption: str | None = None,
        reply_to: str | None = None,
        thread_id: str | None = None,
    ) -> SendResult:
        """`send` with the file as a data URI attachment (signal-cli's
        ``data:<MIME>;filename=<NAME>;base64,<DATA>``): the bytes travel in the request,
        so signal-cli never reads a path of Herald's (it may run as another user, or in
        another container)."""
        encoded = base64.b64encode(file.data).decode("ascii")
        uri = f"data:{file.mime};filename={file.name};base64,{encoded}"
        params: dict[str, Any] = {
            "message": caption or "",
            "attachments": [uri],
            # signal-cli 0.14.2+: shown as a voice message (a play button), not a file
            **({"voiceNote": True} if file.voice else {}),
            **self._target(chat_id),
        }
        try:
            result = await self._rpc("send", params)
        except SignalRpcError as exc:
            self.health.error(f"file upload: {exc}")
            return SendResult(ok=False, permanent_failure=exc.permanent, error=str(exc))
        ts = int((result or {}).get("timestamp") or 0)
        self.health.sent()
        self._remember(self._own, ts, None)
        return SendResult(ok=True, message_ids=[f"{self.account}:{ts}"])

    async def edit(self, chat_id: str, message_id: str, text: str) -> SendResult:
        ts = message_id.rpartition(":")[2]
        if not ts.isdigit():
            return SendResult(ok=False, error=f"not a Signal message id: {message_id}")
        params = {"message": text, "editTimestamp": int(ts), **self._target(chat_id)}
        try:
            await self._rpc("send", params)
        except SignalRpcError as exc:
            return SendResult(ok=False, permanent_failure=exc.permanent, error=str(exc))
        self.health.sent()
        return SendResult(ok=True, message_ids=[message_id])

    async def typing(self, chat_id: str, thread_id: str | None = None) -> None:
        with contextlib.suppress(SignalRpcError):
            await self._rpc("sendTyping", self._target(chat_id))

    def _target(self, chat_id: str) -> dict[str, Any]:
        if chat_id.startswith(GROUP_PREFIX):
            return {"groupId": chat_id[len(GROUP_PREFIX) :]}
        return {"recipient": [chat_id]}

    @staticmethod
    def _remember(store: OrderedDict[int, Any], key: int, value: Any) -> None:
        store[key] = value
        while len(store) > _KEPT_PROMPTS:
            store.popitem(last=False)

    async def _rpc(self, method: str, params: dict[str, Any]) -> Any:
        if self._client is None:
            raise SignalRpcError("not connected")
        body = {"jsonrpc": "2.0", "method": method, "params": params, "id": next(self._ids)}
        try:
            response = await self._client.post(f"{self._base}/api/v1/rpc", json=body, timeout=60)
        except httpx.HTTPError as exc:
            raise SignalRpcError(f"signal-cli unreachable: {exc}") from None
        if response.status_code >= 500:
            raise SignalRpcError(f"signal-cli answered {response.status_code}")
        try:
            answer = response.json()
        except ValueError:
            raise SignalRpcError("signal-cli answered something that is not JSON") from None
        if "error" in answer:
            error = answer["error"] or {}
            message = str(error.get("message") or "unknown error")
            # -32602: bad parameters (an unknown number, a group Herald left): retrying
            # will not help; the delivery ledger marks the target dead.
            raise SignalRpcError(message, permanent=error.get("code") == -32602)
        return answer.get("result")


def create_adapter(config: SignalPlatformConfig, secrets: Any = None) -> SignalAdapter:
    if not config.allowed_users:
        raise ValueError(
            "gateway.platforms.signal.allowed_users is empty: list the numbers (or Signal"
            " UUIDs) of the people Herald may answer"
        )
    return SignalAdapter(config)


__all__ = ["SignalAdapter", "SignalRpcError", "create_adapter"]
