"""The web chat entrance: Herald in a browser, served by the gateway on its own port.

Config ``gateway.platforms.web`` (`WebPlatformConfig`): ``host`` (127.0.0.1),
``port`` (8644), ``base_path`` (the sub-path behind a reverse proxy), cookie and
upload settings. Log in with the token `herald web token` prints; without a token
the adapter does not start.

The browser is a push platform like a chat app: a message typed in the page becomes
a `MessageEvent` for the runner (so busy modes, ``/stop``, ``/steer``, approvals by
button and the delivery ledger all work as in any chat), and everything the runner
sends, edits or streams is published on that chat's event stream (`ChatEvents`),
which the page follows over Server-Sent Events. Each browser chat id is one
session; the page finds earlier chats through the gateway's session bindings.
"""

from __future__ import annotations

import asyncio
import logging
import secrets as secrets_module
from pathlib import Path
from typing import TYPE_CHECKING, Any

from herald.gateway.contracts import (
    Button,
    DispatchResult,
    EventSink,
    MessageEvent,
    OutgoingFile,
    PlatformAdapter,
    SendResult,
    StreamCallbacks,
)
from herald.gateway.platforms.web.attachments import WebFiles
from herald.gateway.platforms.web.events import ChatEvents
from herald.gateway.served.adapter import ServedAdapter
from herald.gateway.served.server import AdapterConfigError, platform_section
from herald.safety import redact

if TYPE_CHECKING:
    from herald.config import HeraldHome, Secrets
    from herald.config.schema_gateway import WebPlatformConfig
    from herald.state import StateStore

log = logging.getLogger(__name__)

__all__ = ["WebAdapter", "create_adapter"]

MAX_MESSAGE = 200_000  # the page has no length limit; this only bounds one event
OWNER = "owner"
_LOOPBACK = ("127.0.0.1", "localhost", "::1")


class WebAdapter(ServedAdapter, PlatformAdapter):
    name = "web"
    push_replies = True

    def __init__(
        self,
        *,
        settings: WebPlatformConfig,
        home_root: Path,
        store: StateStore | None = None,
        secret_values: tuple[str, ...] = (),
        cwd: Path | None = None,
    ) -> None:
        from herald.gateway.platforms.web.auth import TokenVerifier

        self.settings = settings
        self.home_root = Path(home_root)
        self.verifier = TokenVerifier(self.home_root)
        if not self.verifier.configured:
            where = (
                "" if settings.host in _LOOPBACK else f" (and it would listen on {settings.host})"
            )
            raise AdapterConfigError(
                f"the web chat has no login token yet{where}: run `herald web token` once, "
                "keep the token it prints, then start the gateway again"
            )
        self.base_path = (
            "/" + settings.base_path.strip("/") if settings.base_path.strip("/") else ""
        )
        self.cwd = Path(cwd) if cwd is not None else Path.cwd()
        self.events = ChatEvents()
        self.files = WebFiles()
        self._store = store
        self._own_store = False
        self._extra = tuple(secret_values)
        self._turns: set[asyncio.Task[Any]] = set()
        self.running: dict[str, str] = {}  # chat id -> message id of the running turn

    # ---- lifecycle ------------------------------------------------------------------------

    async def connect(self, sink: EventSink) -> None:
        from herald.gateway.platforms.web.app import build_web_app

        await self._serve(sink, build_web_app, host=self.settings.host, port=self.settings.port)

    async def disconnect(self) -> None:
        await self._stop_serving()

    @property
    def port(self) -> int:
        if self._server is None or self._server.port is None:
            raise RuntimeError("the web adapter is not serving; call connect() first")
        return self._server.port

    @property
    def url(self) -> str:
        return f"http://{self.settings.host}:{self.port}{self.base_path}/"

    def _state_root(self) -> Path:
        return self.home_root

    @property
    def default_profile(self) -> str:
        """The profile the web chat's sessions belong to (the runner's default)."""
        return getattr(self._sink, "default_profile", "default")

    def platform_health(self) -> dict[str, Any]:
        """The gateway's platforms (state, reason, traffic, restarts, undelivered) and
        recent transitions, as the watchdog reports them; empty outside a gateway."""
        report = getattr(self._sink, "health_report", None)
        if not callable(report):
            return {"platforms": [], "transitions": []}
        data = report()
        for item in data.get("platforms", []):  # reasons quote platform errors
            item["reason"] = self.redact(str(item.get("reason") or ""))
            item["last_error"] = self.redact(str(item.get("last_error") or ""))
        for item in data.get("transitions", []):
            item["reason"] = self.redact(str(item.get("reason") or ""))
        for item in data.get("undelivered", []):
            item["preview"] = self.redact(str(item.get("preview") or ""))
            item["last_error"] = self.redact(str(item.get("last_error") or ""))
        return data

    # ---- capabilities ---------------------------------------------------------------------

    def max_message_length(self, chat_id: str) -> int:
        return MAX_MESSAGE

    def supports_edits(self) -> bool:
        return True

    def supports_buttons(self) -> bool:
        return True

    def markdown_flavour(self) -> str:
        return "commonmark"

    def redact(self, text: str) -> str:
        return redact(text, extra_secrets=self._extra)

    # ---- output: what the runner sends becomes events of the chat -------------------------

    async def send(
        self,
        chat_id: str,
        text: str,
        *,
        reply_to: str | None = None,
        thread_id: str | None = None,
        buttons: list[list[Button]] | None = None,
    ) -> SendResult:
        message_id = secrets_module.token_hex(6)
        rows = [[{"label": b.label, "data": b.data} for b in row] for row in buttons or []]
        self.events.publish(
            chat_id,
            "message",
            {"id": message_id, "text": self.redact(text), "buttons": rows, "reply_to": reply_to},
        )
        return SendResult(ok=True, message_ids=[message_id])

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
        """Keep the file for the page (`WebFiles`) and announce it on the chat's stream;
        a spoken reply is played in the page."""
        file_id = self.files.keep_out(chat_id, file)
        url = f"{self.base_path}/api/chats/{chat_id}/sent/{file_id}"
        self.events.publish(
            chat_id,
            "file",
            {
                "id": file_id,
                "name": file.name,
                "mime": file.mime,
                "voice": file.voice,
                "bytes": len(file.data),
                "url": url,
                "caption": self.redact(caption or ""),
            },
        )
        return SendResult(ok=True, message_ids=[file_id])

    async def edit(self, chat_id: str, message_id: str, text: str) -> SendResult:
        self.events.publish(chat_id, "edit", {"id": message_id, "text": self.redact(text)})
        return SendResult(ok=True, message_ids=[message_id])

    # ---- input: a message typed in the page -----------------------------------------------

    def submit(self, chat_id: str, text: str, files: list[str] | None = None) -> str:
        """Hand ``text`` (and the files this chat uploaded that ``files`` names) to the
        runner as a message of chat ``chat_id``; returns its id. The outcome arrives on
        the chat's event stream (``done`` or ``notice``). `UnknownUpload` for a file
        this chat did not upload."""
        if self._sink is None:
            raise RuntimeError("the web adapter is not connected")
        attached = self.files.take(chat_id, files or [])
        message_id = secrets_module.token_hex(8)
        event = MessageEvent(
            platform=self.name,
            chat_id=chat_id,
            user_id=OWNER,
            user_name=OWNER,
            text=text,
            message_id=message_id,
            identity="owner",  # the login token is the owner's
            files=attached,
        )
        loop = asyncio.get_running_loop()

        def on_delta(delta: str) -> None:  # the runner calls it on the event loop
            self.events.publish(chat_id, "delta", {"turn": message_id, "text": delta})

        stream = StreamCallbacks(on_text_delta=on_delta)
        is_command = event.is_command
        if not is_command:
            self.running[chat_id] = message_id
            names = [f.name for f in attached]
            self.events.publish(
                chat_id, "turn", {"turn": message_id, "text": self.redact(text), "files": names}
            )
        task = loop.create_task(self._dispatch(event, stream, is_command), name="web-turn")
        self._turns.add(task)
        task.add_done_callback(self._turns.discard)
        return message_id

    async def _dispatch(
        self, event: MessageEvent, stream: StreamCallbacks, is_command: bool
    ) -> None:
        assert self._sink is not None
        chat_id = event.chat_id
        try:
            result = await self._sink.dispatch(event, self, stream=stream)
        except Exception as exc:  # the runner failed; the page must hear about it
            log.exception("web dispatch failed")
            result = DispatchResult(
                status="error", text=f"the gateway failed ({type(exc).__name__})"
            )
        data = {
            "turn": event.message_id,
            "status": result.status,
            "text": self.redact(result.text),
            "session_id": result.session_id,
            "exit_reason": result.exit_reason,
        }
        if is_command or result.status in ("steered", "queued", "ignored", "pairing"):
            self.events.publish(chat_id, "notice", data)
            return
        if self.running.get(chat_id) == event.message_id:
            del self.running[chat_id]
        self.events.publish(chat_id, "done", data)


def create_adapter(
    config: Any, secrets: Secrets, *, home: HeraldHome | None = None, **kw: Any
) -> WebAdapter:
    """The web adapter for ``gateway.platforms.web`` (the whole config or that section)."""
    settings = platform_section(config, "web")
    if home is None:
        from herald.config import resolve_home

        home = resolve_home(None)
    gateway_cwd = None
    full = kw.get("settings")
    if full is not None and full.config.gateway.cwd:
        gateway_cwd = Path(full.config.gateway.cwd).expanduser()
    adapter = WebAdapter(
        settings=settings,
        home_root=home.root,
        store=kw.get("store"),
        secret_values=tuple(secrets.secret_values()),
        cwd=gateway_cwd,
    )
    if full is not None:
        adapter.trusted_proxies = tuple(full.config.gateway.trusted_proxies)
    return adapter
