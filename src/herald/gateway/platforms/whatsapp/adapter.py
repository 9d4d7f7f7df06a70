"""WhatsApp through Meta's Cloud API: signed webhooks in, the Graph API out.

In: Meta posts every message (and every status of Herald's own messages) to the
webhook endpoint (`webhook`), which checks the app secret's signature before reading
a byte of it. Each message is recorded in the gateway's inbound ledger by its wamid
before the 200 goes back, so Meta's retries (it retries anything not answered 200, for
days) are answered once. A chat is a person: WhatsApp's Cloud API has no groups.

Out: ``POST /{version}/{phone_number_id}/messages``, text in parts of at most 4096
characters. WhatsApp accepts free text only within 24 h of the person's last message
(the customer-service window); outside it, an approved template (``template_name``)
goes instead, with the start of the reply as its parameter, and the full reply waits
until the person writes again. Herald tracks each person's last message; when it is
wrong (a restart forgot), Meta's 131047 re-engagement error (answered at once, or as a
failed status later) sends the template then.

Approvals are reply buttons (a list when there are more than three choices). Each
button's id names its prompt; only the newest prompt in a chat is live, a prompt
answers once, and a press counts only from the person the prompt was sent to (the
gateway then checks that they may approve).

Liveness: webhooks arrive only when people write, so silence proves nothing; the
adapter asks the Graph API about its number every ``health_check_seconds`` (an expired
token is the commonest failure) and failed statuses count as errors.

Who reaches what: anyone who can reach the port can post, but only a body signed with
the app secret is read; a captured delivery replayed is answered once (the ledger).
Anyone on WhatsApp can write to the number; only ``allowed_users`` (and numbers the
owner pairs) make turns, a stranger's media is never downloaded, and the profile name
(typed by the sender) is never used as an identity. What an allowed non-owner writes
is ``untrusted:chat:<identity>`` to the model. The model gets no new tool here: its
replies and `send_file` go only to the chat of the turn. A hijacked model's worst is
what it could do on any chat platform, through the same gates.
"""

from __future__ import annotations

import asyncio
import logging
import mimetypes
import secrets as secrets_module
import time
from collections import OrderedDict, deque
from typing import TYPE_CHECKING, Any

from herald.config.schema_whatsapp import WhatsAppPlatformConfig
from herald.gateway.aio import end_task
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
from herald.gateway.media import FileTooLarge, guess_mime
from herald.gateway.platforms.whatsapp.events import Inbound, Status, parse_delivery
from herald.gateway.platforms.whatsapp.graph import RE_ENGAGEMENT, GraphClient, GraphError
from herald.gateway.platforms.whatsapp.webhook import build_whatsapp_app
from herald.gateway.served.server import EmbeddedServer

if TYPE_CHECKING:
    from herald.config import HeraldHome, Secrets, Settings

log = logging.getLogger(__name__)

SECTION = "gateway.platforms.whatsapp"
WHATSAPP_MAX_MESSAGE = 4096
MAX_BUTTONS = 3  # reply buttons per message; more choices go in a list
MAX_BUTTON_TITLE = 20
MAX_ROW_TITLE = 24
MAX_INTERACTIVE_BODY = 1024
MAX_TEMPLATE_PARAMETER = 1000
_PROMPT_PREFIX = "herald:"
# The audio the Cloud API sends as an audio message (OGG only with the Opus codec).
_AUDIO_TYPES = ("audio/aac", "audio/amr", "audio/mpeg", "audio/mp4", "audio/ogg")
_KEPT = 256
_KEPT_PENDING = 20


class WhatsAppAdapter(PlatformAdapter):
    name = "whatsapp"
    push_replies = True

    def __init__(
        self,
        config: WhatsAppPlatformConfig,
        *,
        access_token: str,
        app_secret: str,
        verify_token: str,
    ) -> None:
        assert config.phone_number_id
        self.config = config
        self.phone_number_id = config.phone_number_id
        self.app_secret = app_secret
        self.verify_token = verify_token
        self.path = config.path
        self.graph = GraphClient(
            config.api_url, config.api_version, config.phone_number_id, access_token
        )
        self._sink: EventSink | None = None
        self._server: EmbeddedServer | None = None
        self._probe: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._last_inbound: dict[str, float] = {}  # chat -> its newest message's time
        # prompt token -> (chat, {button id: data}); the newest prompt per chat is live
        self._prompts: OrderedDict[str, tuple[str, dict[str, str]]] = OrderedDict()
        self._live_prompt: dict[str, str] = {}
        self._sent: OrderedDict[str, tuple[str, str]] = OrderedDict()  # wamid -> (chat, text)
        self._pending: dict[str, list[str]] = {}  # chat -> replies waiting for the window
        self.statuses: OrderedDict[str, str] = OrderedDict()  # wamid -> newest status
        self.failures: deque[tuple[str, str, int, str]] = deque(maxlen=50)

    # ---- lifecycle ------------------------------------------------------------------------

    async def connect(self, sink: EventSink) -> None:
        if self._server is not None:
            raise RuntimeError("the WhatsApp adapter is already connected")
        self._sink = sink
        try:
            await self.graph.probe(timeout=30)
        except GraphError as exc:
            await self.graph.close()
            raise ConnectionError(f"WhatsApp: {exc}; check {SECTION}.access_token") from None
        server = EmbeddedServer(
            build_whatsapp_app(self),
            host=self.config.host,
            port=self.config.port,
            name="whatsapp",
        )
        await server.start()
        self._server = server
        self.health.connected()
        self.health.received()  # the Graph API knows the number and the token works
        self._probe = asyncio.create_task(self._probe_loop(), name="whatsapp:health")

    async def reconnect(self, sink: EventSink) -> None:
        """Check the Graph API again; the webhook endpoint keeps listening (a silent
        webhook is Meta holding deliveries, and it retries them)."""
        self._sink = sink
        self.health.reconnecting("checking the Graph API again")
        await self._stop_probe()
        await self.graph.close()  # connections a silent server left hanging
        if self._server is None or not self._server.running:
            self._server = None
            await self.connect(sink)
            return
        self._probe = asyncio.create_task(self._probe_loop(wait=False), name="whatsapp:health")

    async def disconnect(self) -> None:
        await self._stop_probe()
        server, self._server = self._server, None
        if server is not None:
            await server.stop()
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=10)
        await self.graph.close()
        self.health.stopped()

    async def _stop_probe(self) -> None:
        probe, self._probe = self._probe, None
        if probe is not None:
            await end_task(probe)

    @property
    def _probe_timeout(self) -> float:
        # Longer than the silence limit: a Graph API that hangs is found silent (down,
        # restarted) rather than slowly erroring.
        return max(3 * self.config.health_check_seconds, 1.0)

    async def _probe_loop(self, *, wait: bool = True) -> None:
        while True:
            if wait:
                await asyncio.sleep(self.config.health_check_seconds)
            wait = True
            try:
                await self.graph.probe(timeout=self._probe_timeout)
            except GraphError as exc:
                self.health.error(f"health check: {exc}")
                continue
            self.health.heartbeat_ack()
            self.health.received()

    def expected_rhythm(self) -> Rhythm:
        every = self.config.health_check_seconds
        return Rhythm.websocket(every, every)  # one probe may be missed

    @property
    def port(self) -> int:
        if self._server is None or self._server.port is None:
            raise RuntimeError("the WhatsApp adapter is not serving; call connect() first")
        return self._server.port

    # ---- capabilities ---------------------------------------------------------------------

    def max_message_length(self, chat_id: str) -> int:
        return WHATSAPP_MAX_MESSAGE

    def supports_buttons(self) -> bool:
        return True

    def supports_files(self) -> bool:
        return True

    # ---- input ----------------------------------------------------------------------------

    def take_delivery(self, payload: Any) -> None:
        """One signed webhook delivery (called before it is answered 200)."""
        messages, statuses = parse_delivery(payload, self.phone_number_id)
        self.health.received()
        for status in statuses:
            self._take_status(status)
        for message in messages:
            self._take_message(message)

    def _take_message(self, message: Inbound) -> None:
        if self.record_event(self._sink, message.wamid) == "seen":
            return
        chat = message.sender
        sent_at = message.timestamp or time.time()
        self._last_inbound[chat] = max(self._last_inbound.get(chat, 0.0), sent_at)
        if self._pending.get(chat) and self.window_open(chat):
            self._spawn(self._send_pending(chat))
        text = message.text
        if message.reply_id is not None:
            pressed = self._press(chat, message.reply_id)
            if pressed is None:
                log.info("whatsapp: a press on an old or unknown prompt from %s", chat)
                self._spawn(self._say(chat, "That choice has expired; nothing was done."))
                return
            text = pressed
        self._spawn(self._dispatch(message, text))

    async def _dispatch(self, message: Inbound, text: str) -> None:
        media: tuple[str, ...] = ()
        files: tuple[InboundFile, ...] = ()
        if message.unsupported:
            media = (f"a {message.unsupported} message, which Herald cannot read",)
        elif message.media_id:
            files = (self._inbound_file(message, message.media_id),)
        event = MessageEvent(
            platform=self.name,
            chat_id=message.sender,
            user_id=message.sender,
            text=text,
            chat_type="private",
            message_id=message.wamid,
            reply_to=message.context_id,
            # The profile name is whatever the sender typed: never an identity (an
            # allowlist's @name would let anyone in who calls themselves that).
            user_name=None,
            media=media,
            files=files,
            event_id=message.wamid,
            raw=message,
        )
        await self._dispatch_to(self._sink, event)

    def _inbound_file(self, message: Inbound, media_id: str) -> InboundFile:
        """The message's photo, voice note or document, downloaded by its media id only
        when the runner asks: after it authorized the sender (the gateway's allowlist,
        pairing and identities), so a stranger's file is never fetched."""
        mime = guess_mime(message.media_name or "", message.media_mime)
        suffix = mimetypes.guess_extension(mime) or ""
        kind = "voice" if message.media_voice else f"whatsapp-{message.media_type}"
        name = message.media_name or f"{kind}-{message.wamid[-8:]}{suffix}"
        limit = int(self.config.max_attachment_mb * 1024 * 1024)

        async def fetch() -> bytes:
            try:
                data, why = await self.graph.download(media_id, limit)
            except GraphError as exc:
                self.health.error(f"media download: {exc}")
                raise
            if data is None:
                if why.startswith("larger than"):
                    raise FileTooLarge(why)
                raise RuntimeError(why)
            return data

        return InboundFile(name, mime, None, message.media_voice, fetch=fetch)

    def _press(self, chat: str, reply_id: str) -> str | None:
        token = reply_id.removeprefix(_PROMPT_PREFIX).partition(":")[0]
        prompt = self._prompts.get(token)
        if prompt is None or prompt[0] != chat or self._live_prompt.get(chat) != token:
            return None
        del self._prompts[token]  # a prompt answers once
        self._live_prompt.pop(chat, None)
        return prompt[1].get(reply_id)

    def _take_status(self, status: Status) -> None:
        if not status.wamid:
            return
        self.statuses[status.wamid] = status.status
        _trim(self.statuses)
        if status.status != "failed":
            return
        code, title = status.errors[0] if status.errors else (0, "no reason given")
        self.failures.append((status.wamid, status.recipient, code, title))
        self.health.error(f"message to +{status.recipient} failed: {code} {title}")
        sent = self._sent.pop(status.wamid, None)
        if code == RE_ENGAGEMENT and sent is not None:
            chat, text = sent
            self._last_inbound[chat] = 0.0  # the window is closed, whatever we thought
            self._spawn(self._send_template(chat, text))

    # ---- output ---------------------------------------------------------------------------

    def window_open(self, chat: str) -> bool:
        """Free text may go to `chat`: its last message is within the service window (or
        Herald does not know, and lets the Graph API say)."""
        last = self._last_inbound.get(chat)
        if last is None:
            return True
        return time.time() - last < self.config.service_window_hours * 3600

    async def send(
        self,
        chat_id: str,
        text: str,
        *,
        reply_to: str | None = None,
        thread_id: str | None = None,
        buttons: list[list[Button]] | None = None,
    ) -> SendResult:
        if not self.window_open(chat_id):
            return await self._send_template(chat_id, text)
        context = {"context": {"message_id": reply_to}} if reply_to else {}
        choices = [b for row in buttons or [] for b in row]
        if choices and len(text) > MAX_INTERACTIVE_BODY:
            first = await self._send(chat_id, _text(text), context, text)
            if not first.ok:
                return first
            text, context = "Your answer:", {}
        if choices:
            token = secrets_module.token_hex(6)
            message = _interactive(token, text, choices)
            ids = {f"{_PROMPT_PREFIX}{token}:{i}": b.data for i, b in enumerate(choices)}
            result = await self._send(chat_id, {**message, **context}, text)
            if result.ok:
                self._prompts[token] = (chat_id, ids)
                self._live_prompt[chat_id] = token
                _trim(self._prompts)
            return result
        return await self._send(chat_id, {**_text(text), **context}, text)

    async def _send(self, chat: str, message: dict[str, Any], text: str) -> SendResult:
        try:
            wamid = await self.graph.send(chat.lstrip("+"), message)
        except GraphError as exc:
            if exc.code == RE_ENGAGEMENT:
                self._last_inbound[chat] = 0.0
                return await self._send_template(chat, text)
            return SendResult(ok=False, permanent_failure=exc.permanent, error=str(exc))
        self.health.sent()
        self._sent[wamid] = (chat, text)
        _trim(self._sent)
        return SendResult(ok=True, message_ids=[wamid])

    async def _send_template(self, chat: str, text: str) -> SendResult:
        name = self.config.template_name
        if not name:
            why = (
                f"the 24 h window to {chat} is closed (their last message is older) and "
                f"{SECTION}.template_name is not set: approve a template in WhatsApp Manager "
                "and name it there, or wait for them to write"
            )
            self.health.error(why)
            return SendResult(ok=False, error=why)
        template: dict[str, Any] = {
            "name": name,
            "language": {"code": self.config.template_language},
        }
        if self.config.template_text_parameter:
            snippet = " ".join(text.split())  # parameters may not hold newlines or tabs
            if len(snippet) > MAX_TEMPLATE_PARAMETER:
                snippet = snippet[: MAX_TEMPLATE_PARAMETER - 1] + "…"
            parameter = {"type": "text", "text": snippet or "…"}
            template["components"] = [{"type": "body", "parameters": [parameter]}]
        try:
            wamid = await self.graph.send(
                chat.lstrip("+"), {"type": "template", "template": template}
            )
        except GraphError as exc:
            self.health.error(f"template: {exc}")
            return SendResult(ok=False, permanent_failure=exc.permanent, error=str(exc))
        self.health.sent()
        pending = self._pending.setdefault(chat, [])
        pending.append(text)
        del pending[:-_KEPT_PENDING]
        return SendResult(ok=True, message_ids=[wamid])

    async def _send_pending(self, chat: str) -> None:
        waiting = self._pending.pop(chat, [])
        for text in waiting:
            result = await self._send(chat, _text(text), text)
            if not result.ok:
                log.warning("whatsapp: a held reply to %s was not sent: %s", chat, result.error)

    async def _say(self, chat: str, text: str) -> None:
        if self.window_open(chat):
            await self._send(chat, _text(text), text)

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def send_file(
        self,
        chat_id: str,
        file: OutgoingFile,
        *,
        caption: str | None = None,
        reply_to: str | None = None,
        thread_id: str | None = None,
    ) -> SendResult:
        """Upload the bytes (``POST /media``), then send the media by its id."""
        if not self.window_open(chat_id):
            why = f"the 24 h window to {chat_id} is closed: files can go only after they write"
            return SendResult(ok=False, error=why)
        try:
            media_id = await self.graph.upload(file.name, file.data, file.mime)
        except GraphError as exc:
            return SendResult(ok=False, permanent_failure=exc.permanent, error=str(exc))
        kind = "image" if file.mime in ("image/jpeg", "image/png") else "document"
        if file.voice and file.mime in _AUDIO_TYPES and not caption:
            kind = "audio"  # played in the chat; an audio message carries no caption
        media: dict[str, Any] = {"id": media_id}
        if kind == "document":
            media["filename"] = file.name
        if caption:
            media["caption"] = caption[:MAX_INTERACTIVE_BODY]
        context = {"context": {"message_id": reply_to}} if reply_to else {}
        return await self._send(chat_id, {"type": kind, kind: media, **context}, caption or "")


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": {"body": text, "preview_url": False}}


def _interactive(token: str, body: str, choices: list[Button]) -> dict[str, Any]:
    ids = [f"{_PROMPT_PREFIX}{token}:{i}" for i in range(len(choices))]
    if len(choices) <= MAX_BUTTONS:
        action: dict[str, Any] = {
            "buttons": [
                {"type": "reply", "reply": {"id": i, "title": _title(b, MAX_BUTTON_TITLE)}}
                for i, b in zip(ids, choices, strict=True)
            ]
        }
        kind = "button"
    else:
        rows = [
            {"id": i, "title": _title(b, MAX_ROW_TITLE)} for i, b in zip(ids, choices, strict=True)
        ]
        action = {"button": "Choose", "sections": [{"title": "Choices", "rows": rows[:10]}]}
        kind = "list"
    return {
        "type": "interactive",
        "interactive": {"type": kind, "body": {"text": body}, "action": action},
    }


def _title(button: Button, limit: int) -> str:
    title = " ".join((button.label or button.data).split())
    return title if len(title) <= limit else title[: limit - 1] + "…"


def _trim(store: OrderedDict[str, Any]) -> None:
    while len(store) > _KEPT:
        store.popitem(last=False)


def create_adapter(
    config: WhatsAppPlatformConfig,
    secrets: Secrets,
    *,
    settings: Settings | None = None,
    home: HeraldHome | None = None,
) -> WhatsAppAdapter:
    from herald.gateway.secret_refs import resolve_secret_ref

    if not config.phone_number_id:
        raise ValueError(
            f"{SECTION}.phone_number_id is not set: copy the Phone number ID from WhatsApp →"
            " API Setup in your Meta app"
        )
    if not config.allowed_users:
        raise ValueError(
            f"{SECTION}.allowed_users is empty: list the phone numbers (+15551234567) of the"
            " people Herald may answer"
        )
    found: dict[str, str] = {}
    for key, env in (
        ("access_token", "WHATSAPP_ACCESS_TOKEN"),
        ("app_secret", "WHATSAPP_APP_SECRET"),
        ("verify_token", "WHATSAPP_VERIFY_TOKEN"),
    ):
        value = resolve_secret_ref(getattr(config, key), secrets, setting=f"{SECTION}.{key}")
        if not value:
            raise ValueError(
                f"{SECTION}.{key} is not set: put `{key}: ${{{env}}}` under {SECTION} in"
                f" config.yaml and {env}=… in .env (see the README's WhatsApp section)"
            )
        found[key] = value
    return WhatsAppAdapter(
        config,
        access_token=found["access_token"],
        app_secret=found["app_secret"],
        verify_token=found["verify_token"],
    )


__all__ = ["WHATSAPP_MAX_MESSAGE", "WhatsAppAdapter", "create_adapter"]
