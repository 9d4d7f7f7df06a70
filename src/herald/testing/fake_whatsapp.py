"""A fake of Meta's WhatsApp Cloud API on 127.0.0.1: the Graph API Herald calls, and
the signed webhooks Meta posts to Herald.

Graph API (``/{version}/…``, bearer token checked on every call):

- ``GET /{version}/{phone_number_id}``: the number (the adapter's health probe);
- ``POST /{version}/{phone_number_id}/messages``: text (at most 4096 characters),
  interactive buttons (at most 3, titles of 20) and lists (10 rows, titles of 24),
  templates (only the ones in `templates`), media by id; answered with a wamid. Free
  text to someone whose last message is older than 24 h (or who never wrote) is
  accepted and then fails with a status webhook carrying error 131047, as Meta does
  (``reengagement_sync`` answers it as a 400 instead);
- ``POST /{version}/{phone_number_id}/media`` (multipart) and ``GET /{version}/{id}``
  → a download URL that serves the bytes with the same token;
- errors as Meta shapes them: ``{"error": {"message", "type", "code", "fbtrace_id"}}``.

Webhooks: what people do (`user_message`, `press`) becomes a delivery posted to
`webhook_url`, signed ``X-Hub-Signature-256`` with the app secret, retried until it is
answered 200 (Meta retries for days), in order. Statuses (delivered, failed) of
Herald's messages are posted the same way.

Faults: `storm` (every Graph call a 503), `fail_sends`/`fail_uploads` (the next n a
500), `rate_limit` (the next n sends a 429 with code 130429), `silence` (Graph calls
hang, webhooks are held), `drop_connections_every` (connections cut, deliveries in
flight retried).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import itertools
import json
import secrets
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from aiohttp import ClientSession, ClientTimeout, web

from herald.testing.aio_server import AioServerThread, PeriodicDrops

PHONE_NUMBER_ID = "106540352242922"
ACCESS_TOKEN = "EAAGfakeWhatsAppAccessTokenForTests0123456789"
APP_SECRET = "f0a8e7c6b5d4e3f2a1b0c9d8e7f6a5b4"
VERSION = "v21.0"
WINDOW = 24 * 3600.0


@dataclass
class WaSent:
    """One message Herald sent, as the Graph API took it."""

    wamid: str
    to: str  # digits
    kind: str  # text | interactive | template | image | document | …
    text: str = ""  # the body (text, interactive body, caption)
    buttons: tuple[tuple[str, str], ...] = ()  # (id, title) of reply buttons or list rows
    interactive: str | None = None  # button | list
    template: tuple[str, str, tuple[str, ...]] | None = None  # (name, language, parameters)
    media: tuple[str, bytes] | None = None  # (file name, bytes) of media sent by id
    context: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


def graph_error(status: int, code: int, message: str) -> web.Response:
    body = {
        "error": {
            "message": message,
            "type": "OAuthException",
            "code": code,
            "fbtrace_id": secrets.token_hex(6),
        }
    }
    return web.json_response(body, status=status)


class FakeWhatsAppServer(PeriodicDrops):
    def __init__(
        self,
        *,
        phone_number_id: str = PHONE_NUMBER_ID,
        access_token: str = ACCESS_TOKEN,
        app_secret: str = APP_SECRET,
        templates: tuple[tuple[str, str], ...] = (("herald_reply", "en_US"),),
    ) -> None:
        self.phone_number_id = phone_number_id
        self.access_token = access_token
        self.app_secret = app_secret
        self.templates = set(templates)
        self.webhook_url: str | None = None
        self.sent: list[WaSent] = []
        self.uploads: dict[str, tuple[str, str, bytes]] = {}  # id -> (name, mime, bytes)
        self.media: dict[str, tuple[str, str, bytes]] = {}  # what people sent, by id
        self.last_inbound: dict[str, float] = {}  # digits -> their newest message's time
        self.downloads: list[str] = []  # media ids whose bytes were fetched
        self.delivered = 0  # deliveries answered 200
        self.refused: list[int] = []  # statuses of refused delivery attempts
        self.probes = 0
        self.reengagement_sync = False
        self.post_statuses = True
        self.retry_after = 0.2  # seconds between delivery attempts (Meta: minutes)
        self._ids = itertools.count(1)
        self._queue: deque[bytes] = deque()
        self._history: list[bytes] = []
        self._in_flight = False
        self._storm = False
        self._silent = False
        self._fail_sends = 0
        self._fail_uploads = 0
        self._rate_limited = 0
        self._wake: asyncio.Event | None = None
        self._calm: asyncio.Event | None = None
        self._client: ClientSession | None = None
        self._deliverer: asyncio.Task[None] | None = None
        self._transports: set[asyncio.Transport] = set()
        self._server = AioServerThread(self._make_app)

    # ---- lifecycle ------------------------------------------------------------------------

    def start(self) -> FakeWhatsAppServer:
        self._server.start()
        self._server.call(self._start_delivering)
        return self

    def _start_delivering(self) -> None:
        self._wake = asyncio.Event()
        self._calm = asyncio.Event()
        self._calm.set()
        self._deliverer = asyncio.ensure_future(self._deliver_loop())

    def stop(self) -> None:
        async def before() -> None:
            self.drop_every(None)
            if self._deliverer is not None:
                self._deliverer.cancel()
            if self._client is not None:
                await self._client.close()

        self._server.stop(before)

    def __enter__(self) -> FakeWhatsAppServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.port}"

    def _make_app(self) -> web.Application:
        app = web.Application(client_max_size=128 * 1024 * 1024, middlewares=[self._faults])
        app.add_routes(
            [
                web.get(f"/{VERSION}/media-download/{{media_id}}", self._download),
                web.post(f"/{VERSION}/{{number}}/messages", self._messages),
                web.post(f"/{VERSION}/{{number}}/media", self._upload),
                web.get(f"/{VERSION}/{{object_id}}", self._object),
            ]
        )
        return app

    # ---- playing the people ---------------------------------------------------------------

    def user_message(
        self,
        sender: str,
        text: str = "",
        *,
        media: tuple[str, str, bytes] | None = None,
        context: str | None = None,
        age: float = 0.0,
        name: str = "Tester",
    ) -> str:
        """`sender` (+digits) writes `text`, with `media` (name, MIME, bytes) attached;
        `age`: how many seconds ago they wrote it (a late delivery). Returns its wamid."""
        digits = sender.lstrip("+")
        wamid = self._wamid()
        sent_at = time.time() - age
        message: dict[str, Any] = {"from": digits, "id": wamid, "timestamp": str(int(sent_at))}
        if media is not None:
            file_name, mime, data = media
            media_id = f"in{next(self._ids)}"
            self.media[media_id] = (file_name, mime, data)
            # A recording made in WhatsApp is an `audio` with "voice": true (OGG/Opus);
            # audio carries no caption.
            kind = "image" if mime.startswith("image/") else "document"
            body: dict[str, Any] = {"id": media_id, "mime_type": mime}
            if mime.startswith("audio/"):
                kind = "audio"
                body["voice"] = mime.startswith("audio/ogg")
            else:
                body["caption"] = text
            body["sha256"] = hashlib.sha256(data).hexdigest()
            if kind == "document":
                body["filename"] = file_name
            message.update({"type": kind, kind: body})
        else:
            message.update({"type": "text", "text": {"body": text}})
        if context:
            message["context"] = {"from": self.phone_number_id, "id": context}
        self.last_inbound[digits] = max(self.last_inbound.get(digits, 0.0), sent_at)
        self._post(
            {"contacts": [{"profile": {"name": name}, "wa_id": digits}], "messages": [message]}
        )
        return wamid

    def press(self, sender: str, prompt: WaSent, reply_id: str) -> str:
        """`sender` presses the button (or list row) `reply_id` of `prompt`."""
        title = dict(prompt.buttons).get(reply_id, "?")
        kind = "list_reply" if prompt.interactive == "list" else "button_reply"
        digits = sender.lstrip("+")
        wamid = self._wamid()
        message = {
            "from": digits,
            "id": wamid,
            "timestamp": str(int(time.time())),
            "type": "interactive",
            "interactive": {"type": kind, kind: {"id": reply_id, "title": title}},
            "context": {"from": self.phone_number_id, "id": prompt.wamid},
        }
        self.last_inbound[digits] = time.time()
        self._post(
            {"contacts": [{"profile": {"name": "Tester"}, "wa_id": digits}], "messages": [message]}
        )
        return wamid

    def replay_last(self) -> None:
        """Deliver the newest delivery again (Meta retrying one it thinks was lost)."""
        self._server.call(lambda: self._enqueue(self._history[-1]))

    def drained(self) -> bool:
        return self._server.call(lambda: not self._queue and not self._in_flight)

    def sent_to(self, who: str) -> list[WaSent]:
        digits = who.lstrip("+")
        return [s for s in list(self.sent) if s.to == digits]

    def signed(self, body: bytes, secret: str | None = None) -> dict[str, str]:
        digest = hmac.new((secret or self.app_secret).encode(), body, hashlib.sha256)
        return {
            "X-Hub-Signature-256": "sha256=" + digest.hexdigest(),
            "Content-Type": "application/json",
        }

    def delivery(self, value: dict[str, Any]) -> bytes:
        """A webhook body (as Meta wraps it) around one change `value`."""
        value = {
            "messaging_product": "whatsapp",
            "metadata": {
                "display_phone_number": "15550000001",
                "phone_number_id": self.phone_number_id,
            },
            **value,
        }
        change = {"field": "messages", "value": value}
        payload = {
            "object": "whatsapp_business_account",
            "entry": [{"id": "WABA", "changes": [change]}],
        }
        return json.dumps(payload).encode()

    # ---- faults ---------------------------------------------------------------------------

    def storm(self, on: bool) -> None:
        self._storm = on

    def fail_sends(self, times: int) -> None:
        self._fail_sends = times

    def fail_uploads(self, times: int) -> None:
        self._fail_uploads = times

    def rate_limit(self, times: int) -> None:
        self._rate_limited = times

    def silence(self, on: bool) -> None:
        def flip() -> None:
            self._silent = on
            assert self._calm is not None and self._wake is not None
            if on:
                self._calm.clear()
                return
            self._calm.set()
            self._wake.set()
            for transport in list(self._transports):  # whatever hung is cut
                transport.abort()

        self._server.call(flip)

    def drop_connections_every(self, seconds: float | None) -> None:
        self._server.call(lambda: self.drop_every(seconds))

    async def drop_all(self) -> int:
        dropped = len(self._transports)
        for transport in list(self._transports):
            transport.abort()
        if self._client is not None:  # deliveries in flight are cut and retried
            client, self._client = self._client, None
            await client.close()
        return dropped

    # ---- the Graph API --------------------------------------------------------------------

    @web.middleware
    async def _faults(self, request: web.Request, handler: Any) -> web.StreamResponse:
        transport = request.transport
        if transport is not None:
            self._transports.add(transport)
        try:
            if request.headers.get("Authorization") != f"Bearer {self.access_token}":
                return graph_error(
                    401, 190, "Invalid OAuth access token - Cannot parse access token"
                )
            if self._silent:
                assert self._calm is not None
                await self._calm.wait()  # hangs until the silence ends (and is then cut)
            if self._storm:
                return graph_error(503, 2, "Service temporarily unavailable")
            return await handler(request)
        finally:
            if transport is not None:
                self._transports.discard(transport)

    async def _object(self, request: web.Request) -> web.Response:
        object_id = request.match_info["object_id"]
        if object_id == self.phone_number_id:
            self.probes += 1
            return web.json_response({"id": object_id, "display_phone_number": "+1 555-000-0001"})
        found = self.media.get(object_id) or self.uploads.get(object_id)
        if found is None:
            return graph_error(
                400, 100, f"Unsupported get request. Object with ID '{object_id}' does not exist"
            )
        _name, mime, data = found
        return web.json_response(
            {
                "messaging_product": "whatsapp",
                "url": f"{self.url}/{VERSION}/media-download/{object_id}",
                "mime_type": mime,
                "sha256": hashlib.sha256(data).hexdigest(),
                "file_size": len(data),
                "id": object_id,
            }
        )

    async def _download(self, request: web.Request) -> web.Response:
        found = self.media.get(request.match_info["media_id"])
        if found is None:
            return web.Response(status=404)
        self.downloads.append(request.match_info["media_id"])
        return web.Response(body=found[2], content_type=found[1])

    async def _upload(self, request: web.Request) -> web.Response:
        if self._fail_uploads > 0:
            self._fail_uploads -= 1
            return graph_error(500, 1, "An unknown error occurred")
        if request.match_info["number"] != self.phone_number_id:
            return graph_error(400, 100, "Invalid phone number id")
        form = await request.post()
        upload = form.get("file")
        if form.get("messaging_product") != "whatsapp" or not isinstance(upload, web.FileField):
            return graph_error(400, 100, "(#100) The parameter messaging_product is required.")
        media_id = f"up{next(self._ids)}"
        self.uploads[media_id] = (upload.filename, str(form.get("type") or ""), upload.file.read())
        return web.json_response({"id": media_id})

    async def _messages(self, request: web.Request) -> web.Response:
        if request.match_info["number"] != self.phone_number_id:
            return graph_error(400, 100, "Invalid phone number id")
        if self._rate_limited > 0:
            self._rate_limited -= 1
            return graph_error(429, 130429, "Rate limit hit")
        if self._fail_sends > 0:
            self._fail_sends -= 1
            return graph_error(500, 1, "An unknown error occurred")
        try:
            body = await request.json()
        except ValueError:
            return graph_error(400, 100, "(#100) Invalid JSON")
        try:
            sent = self._take_send(body)
        except ValueError as problem:
            return graph_error(400, 100, f"(#100) {problem}")
        free = sent.kind != "template"
        last = self.last_inbound.get(sent.to)
        closed = free and (last is None or time.time() - last >= WINDOW)
        if closed and self.reengagement_sync:
            return graph_error(400, 131047, "Re-engagement message")
        self.sent.append(sent)
        if self.post_statuses:
            status: dict[str, Any] = {
                "id": sent.wamid,
                "recipient_id": sent.to,
                "timestamp": str(int(time.time())),
                "status": "failed" if closed else "delivered",
            }
            if closed:
                status["errors"] = [{"code": 131047, "title": "Re-engagement message"}]
            self._enqueue(self.delivery({"statuses": [status]}))
        return web.json_response(
            {
                "messaging_product": "whatsapp",
                "contacts": [{"input": sent.to, "wa_id": sent.to}],
                "messages": [{"id": sent.wamid}],
            }
        )

    def _take_send(self, body: dict[str, Any]) -> WaSent:
        if body.get("messaging_product") != "whatsapp":
            raise ValueError("The parameter messaging_product is required.")
        to = str(body.get("to") or "")
        if not to.isdigit():
            raise ValueError("Invalid parameter: to")
        kind = str(body.get("type") or "text")
        context = (body.get("context") or {}).get("message_id")
        common = {"wamid": self._wamid(), "to": to, "kind": kind, "context": context, "raw": body}
        if kind == "text":
            text = str((body.get("text") or {}).get("body") or "")
            if not text or len(text) > 4096:
                raise ValueError("Param text['body'] must be 1 to 4096 characters long.")
            return WaSent(text=text, **common)
        if kind == "interactive":
            return self._interactive(body.get("interactive") or {}, common)
        if kind == "template":
            template = body.get("template") or {}
            name, language = template.get("name"), (template.get("language") or {}).get("code")
            if (name, language) not in self.templates:
                raise ValueError(
                    f"Template name does not exist in the translation ({name}, {language})"
                )
            parameters = tuple(
                str(p.get("text"))
                for c in template.get("components") or []
                for p in c.get("parameters") or []
            )
            if any("\n" in p or "\t" in p or len(p) > 1024 for p in parameters):
                raise ValueError("Param text cannot have new-line/tab characters or more than 1024")
            return WaSent(template=(str(name), str(language), parameters), **common)
        if kind in ("image", "document", "audio", "video"):
            media = body.get(kind) or {}
            found = self.uploads.get(str(media.get("id")))
            if found is None:
                raise ValueError(f"Invalid media id {media.get('id')}")
            name = str(media.get("filename") or found[0])
            return WaSent(text=str(media.get("caption") or ""), media=(name, found[2]), **common)
        raise ValueError(f"Unsupported message type {kind}")

    def _interactive(self, interactive: dict[str, Any], common: dict[str, Any]) -> WaSent:
        kind = interactive.get("type")
        text = str((interactive.get("body") or {}).get("text") or "")
        action = interactive.get("action") or {}
        if not text or len(text) > 1024:
            raise ValueError("Interactive body text must be 1 to 1024 characters")
        if kind == "button":
            pairs = [(b["reply"]["id"], b["reply"]["title"]) for b in action.get("buttons") or []]
            if not 1 <= len(pairs) <= 3 or any(len(t) > 20 for _, t in pairs):
                raise ValueError("Buttons: 1 to 3, each title at most 20 characters")
        elif kind == "list":
            pairs = [
                (r["id"], r["title"])
                for s in action.get("sections") or []
                for r in s.get("rows") or []
            ]
            if not 1 <= len(pairs) <= 10 or any(len(t) > 24 for _, t in pairs):
                raise ValueError("List: 1 to 10 rows, each title at most 24 characters")
        else:
            raise ValueError(f"Unsupported interactive type {kind}")
        if any(len(i) > 256 for i, _ in pairs) or len({i for i, _ in pairs}) != len(pairs):
            raise ValueError("Button ids must be unique and at most 256 characters")
        return WaSent(text=text, buttons=tuple(pairs), interactive=str(kind), **common)

    # ---- webhooks -------------------------------------------------------------------------

    def _wamid(self) -> str:
        return f"wamid.HBgL{next(self._ids):06d}{secrets.token_hex(4)}"

    def _post(self, value: dict[str, Any]) -> None:
        body = self.delivery(value)
        self._server.call(lambda: self._enqueue(body))

    def _enqueue(self, body: bytes) -> None:
        self._queue.append(body)
        self._history.append(body)
        assert self._wake is not None
        self._wake.set()

    async def _deliver_loop(self) -> None:
        assert self._wake is not None and self._calm is not None
        while True:
            if not self._queue:
                self._wake.clear()
                await self._wake.wait()
                continue
            await self._calm.wait()
            if self.webhook_url is None:
                await asyncio.sleep(self.retry_after)
                continue
            self._in_flight = True
            try:
                ok = await self._attempt(self._queue[0])
            finally:
                self._in_flight = False
            if ok:
                self._queue.popleft()
                self.delivered += 1
            else:
                await asyncio.sleep(self.retry_after)

    async def _attempt(self, body: bytes) -> bool:
        if self._client is None:
            self._client = ClientSession(timeout=ClientTimeout(total=20))
        assert self.webhook_url is not None
        try:
            async with self._client.post(
                self.webhook_url, data=body, headers=self.signed(body)
            ) as answer:
                await answer.read()
                if answer.status != 200:
                    self.refused.append(answer.status)
                return answer.status == 200
        except Exception:  # refused, cut, timed out: Meta tries again later
            return False


__all__ = ["ACCESS_TOKEN", "APP_SECRET", "PHONE_NUMBER_ID", "FakeWhatsAppServer", "WaSent"]
