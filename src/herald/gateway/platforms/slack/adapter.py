"""Slack: slack-bolt over Socket Mode (an app-level token, no public URL) or HTTP
events (a Request URL whose requests bolt verifies by signing secret and timestamp).

DMs are always taken; in channels the bot answers `app_mention` (or every message
when `require_mention` is off), and each thread is a session. Block Kit buttons
carry their command as the button's value; pressing one is a command from the
presser (only approvers approve: the runner's call). Every event is recorded in the
inbound ledger by a middleware that runs before bolt acknowledges it, so Slack's
retries (same `event_id`) and replays are answered once.

Replies go out as mrkdwn with `&`, `<`, `>` escaped (no `<!channel>` from a model),
link unfurling off, and the message they answer in the message's metadata.
Rate limits are the SDK's to wait out (its rate-limit retry handler).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.response import BoltResponse
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
from slack_sdk.web.async_client import AsyncWebClient

from herald.gateway.auth import allowlist_matches
from herald.gateway.contracts import (
    Button,
    EventSink,
    MessageEvent,
    OutgoingFile,
    PlatformAdapter,
    SendResult,
)
from herald.gateway.health import Rhythm
from herald.gateway.platforms.slack.config import SlackSecrets, resolve_secrets
from herald.gateway.platforms.slack.events import (
    BUTTON_PREFIX,
    event_from_action,
    event_from_command,
    event_from_message,
    is_from_a_person,
)
from herald.gateway.platforms.slack.files import save_files
from herald.gateway.platforms.slack.format import (
    SLACK_MAX_MESSAGE_LENGTH,
    markdown_to_mrkdwn,
)

if TYPE_CHECKING:
    from herald.config import HeraldConfig, HeraldHome, Secrets, Settings
    from herald.config.schema_slack import SlackPlatformConfig

log = logging.getLogger(__name__)

PERMANENT_ERRORS = {
    "channel_not_found",
    "not_in_channel",
    "is_archived",
    "account_inactive",
    "invalid_auth",
    "token_revoked",
    "user_not_found",
}
SLASH_COMMANDS = re.compile(r"^/(stop|new|usage|agents)$")


class SlackConnectError(RuntimeError):
    """Slack refused the tokens or could not be reached at start-up."""


class SlackAdapter(PlatformAdapter):
    name = "slack"
    push_replies = True

    def __init__(
        self,
        secrets: SlackSecrets,
        *,
        mode: str = "socket",
        api_url: str | None = None,
        require_mention: bool = True,
        ping_interval: float = 10.0,
        silence_slack: float = 15.0,
        host: str = "127.0.0.1",
        port: int = 8645,
        path: str = "/slack/events",
        attachments_dir: Path | None = None,
        max_attachment_bytes: int = 8 * 1024 * 1024,
        allowed_users: tuple[str, ...] = (),
        drain_timeout: float = 10.0,
    ) -> None:
        self._secrets = secrets
        self._mode = mode
        self._api_url = api_url
        self._require_mention = require_mention
        self._ping_interval = ping_interval
        self._silence_slack = silence_slack
        self._host, self._port, self._path = host, port, path
        self._attachments_dir = attachments_dir
        self._max_attachment_bytes = max_attachment_bytes
        self._allowed_users = allowed_users
        self._drain_timeout = drain_timeout
        self._app: AsyncApp | None = None
        self._socket: Any = None  # AsyncSocketModeHandler
        self._http: Any = None  # aiohttp AppRunner (http mode)
        self._pong_watch: asyncio.Task[None] | None = None
        self._greeted: Any = None  # the socket session that last sent something
        self._sink: EventSink | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.bot_user_id: str | None = None
        self.bound_port: int | None = None

    # ---- lifecycle --------------------------------------------------------------------------

    def _client(self) -> AsyncWebClient:
        options: dict[str, Any] = {"token": self._secrets.bot_token}
        if self._api_url:
            options["base_url"] = self._api_url
        client = AsyncWebClient(**options)
        client.retry_handlers.append(AsyncRateLimitErrorRetryHandler(max_retry_count=2))
        return client

    async def connect(self, sink: EventSink) -> None:
        if self._app is not None:
            raise RuntimeError("the Slack adapter is already connected")
        self._sink = sink
        client = self._client()
        try:
            identity = await client.auth_test()
        except SlackApiError as error:
            code = _error_code(error) or f"HTTP {error.response.status_code}"
            raise SlackConnectError(f"Slack refused the bot token: {code}") from None
        except Exception as error:
            raise SlackConnectError(f"cannot reach Slack: {error!r}") from None
        self.bot_user_id = str(identity["user_id"])
        app = AsyncApp(
            client=client,
            signing_secret=self._secrets.signing_secret,
            request_verification_enabled=self._mode == "http",
        )
        self._register(app)
        self._app = app
        try:
            if self._mode == "socket":
                await self._open_socket(app)
            else:
                await self._serve_http(app)
        except BaseException:
            self._app = None
            raise
        self.health.connected()
        log.info("slack: connected as %s (%s mode)", self.bot_user_id, self._mode)

    async def _open_socket(self, app: AsyncApp) -> None:
        from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler

        assert self._secrets.app_token is not None
        handler = AsyncSocketModeHandler(app, self._secrets.app_token)
        handler.client.ping_interval = self._ping_interval
        handler.client.on_message_listeners.append(self._on_socket_message)
        handler.client.on_close_listeners.append(self._on_socket_close)
        try:
            await handler.connect_async()
        except Exception as error:
            await handler.close_async()
            raise SlackConnectError(f"cannot open the Socket Mode connection: {error}") from None
        self._socket = handler
        self._pong_watch = asyncio.get_running_loop().create_task(self._watch_pongs(handler))

    async def _serve_http(self, app: AsyncApp) -> None:
        from aiohttp import web
        from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request

        async def events(request: web.Request) -> web.Response:
            response = await app.async_dispatch(await to_bolt_request(request))
            if response.status == 200:
                self.health.received()
            return await to_aiohttp_response(response)

        web_app = web.Application(client_max_size=1024 * 1024)
        web_app.router.add_post(self._path, events)
        runner = web.AppRunner(web_app, handle_signals=False, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, self._host, self._port)
        await site.start()
        self._http = runner
        for address in runner.addresses:
            self.bound_port = int(address[1])
        log.info("slack: events at http://%s:%s%s", self._host, self.bound_port, self._path)

    async def disconnect(self) -> None:
        app = self._app
        if app is None:
            return
        self._app = None
        try:
            await self._close_receiving()
            pending = {task for task in self._tasks if not task.done()}
            if pending:
                _, late = await asyncio.wait(pending, timeout=self._drain_timeout)
                for task in late:
                    task.cancel()
        finally:
            self.health.stopped()

    async def _close_receiving(self) -> None:
        watch, self._pong_watch = self._pong_watch, None
        if watch is not None:
            watch.cancel()
        handler, self._socket = self._socket, None
        if handler is not None:
            with contextlib.suppress(Exception):
                await handler.close_async()
        runner, self._http = self._http, None
        if runner is not None:
            await runner.cleanup()

    async def reconnect(self, sink: EventSink) -> None:
        """A new Socket Mode connection (or HTTP listener); turns in flight keep the
        Web API client and reply through it."""
        self._sink = sink
        app = self._app
        if app is None:
            await self.connect(sink)
            return
        self.health.reconnecting("opening a new Socket Mode connection")
        await self._close_receiving()
        if self._mode == "socket":
            await self._open_socket(app)
        else:
            await self._serve_http(app)

    def expected_rhythm(self) -> Rhythm:
        if self._mode == "http":
            return Rhythm.served()
        return Rhythm.websocket(self._ping_interval, self._silence_slack)

    # ---- health from the socket --------------------------------------------------------------

    async def _on_socket_message(self, message: Any) -> None:
        self.health.received()
        handler = self._socket
        if handler is not None:
            self._greeted = handler.client.current_session  # this session talks

    async def _on_socket_close(self, message: Any) -> None:
        self.health.reconnecting("the Socket Mode connection closed; the SDK is reconnecting")

    async def _watch_pongs(self, handler: Any) -> None:
        """The SDK answers for pongs itself; a newer pong time is a heartbeat ack."""
        last = None
        while True:
            await asyncio.sleep(min(self._ping_interval, 1.0))
            client = handler.client
            seen = client.last_ping_pong_time
            # The SDK also stamps that time when a new session starts, pong or not; only
            # a session that has spoken (hello at least) vouches for its pongs.
            if seen is not None and seen != last and client.current_session is self._greeted:
                last = seen
                self.health.heartbeat_ack()

    # ---- capabilities -----------------------------------------------------------------------

    def max_message_length(self, chat_id: str) -> int:
        return SLACK_MAX_MESSAGE_LENGTH

    def measure(self, text: str) -> int:
        return len(markdown_to_mrkdwn(text))

    def supports_edits(self) -> bool:
        return True

    def supports_buttons(self) -> bool:
        return True

    def supports_threads(self) -> bool:
        return True

    def markdown_flavour(self) -> str:
        return "commonmark"  # taken as Markdown, sent as mrkdwn

    # ---- output -----------------------------------------------------------------------------

    async def send(
        self,
        chat_id: str,
        text: str,
        *,
        reply_to: str | None = None,
        thread_id: str | None = None,
        buttons: list[list[Button]] | None = None,
    ) -> SendResult:
        app = self._app
        if app is None:
            return SendResult(ok=False, error="the Slack adapter is not connected")
        if not text.strip():
            return SendResult(ok=False, error="refusing to send an empty message")
        rendered = markdown_to_mrkdwn(text)
        options: dict[str, Any] = {
            "channel": chat_id,
            "text": rendered,
            "unfurl_links": False,
            "unfurl_media": False,
        }
        if thread_id:
            options["thread_ts"] = thread_id
        if buttons:
            options["blocks"] = _blocks(rendered, buttons)
        if reply_to:
            options["metadata"] = {
                "event_type": "herald_reply",
                "event_payload": {"reply_to": reply_to},
            }
        try:
            response = await app.client.chat_postMessage(**options)
        except Exception as error:
            return self._failed("send", error)
        self.health.sent()
        return SendResult(ok=True, message_ids=[str(response["ts"])])

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
        """files_upload_v2: the external upload flow (getUploadURLExternal, the bytes to
        the upload URL, completeUploadExternal shares it in the channel or thread, with
        the caption as its comment). Needs the `files:write` scope."""
        app = self._app
        if app is None:
            return SendResult(ok=False, error="the Slack adapter is not connected")
        options: dict[str, Any] = {
            "channel": chat_id,
            "content": file.data,
            "filename": file.name,
            "title": file.name,
        }
        if caption:
            options["initial_comment"] = markdown_to_mrkdwn(caption)
        if thread_id:
            options["thread_ts"] = thread_id
        try:
            response = await app.client.files_upload_v2(**options)
        except Exception as error:
            return self._failed("file upload", error)
        self.health.sent()
        uploaded = response.get("files") or [response.get("file") or {}]
        return SendResult(ok=True, message_ids=[str(uploaded[0].get("id") or "")])

    async def edit(self, chat_id: str, message_id: str, text: str) -> SendResult:
        """Replace a message's text; its buttons go away (an answered approval's
        buttons must not be pressed twice)."""
        app = self._app
        if app is None:
            return SendResult(ok=False, error="the Slack adapter is not connected")
        try:
            await app.client.chat_update(
                channel=chat_id, ts=message_id, text=markdown_to_mrkdwn(text), blocks=[]
            )
        except Exception as error:
            return self._failed("edit", error)
        return SendResult(ok=True, message_ids=[message_id])

    def _failed(self, what: str, error: Exception) -> SendResult:
        permanent = False
        if isinstance(error, SlackApiError):
            code = _error_code(error)
            permanent = code in PERMANENT_ERRORS
            reason = f"Slack refused the {what}: {code or f'HTTP {error.response.status_code}'}"
        else:
            reason = f"the {what} did not reach Slack: {error!r}"
        if not permanent:
            self.health.error(reason)
        log.warning("slack: %s", reason)
        return SendResult(ok=False, permanent_failure=permanent, error=reason)

    async def typing(self, chat_id: str, thread_id: str | None = None) -> None:
        """Slack has no typing indicator for bots outside assistant threads."""

    # ---- input ------------------------------------------------------------------------------

    def _register(self, app: AsyncApp) -> None:
        app.middleware(self._ledger)
        app.event("message")(self._on_message)
        app.event("app_mention")(self._on_mention)
        app.action(re.compile("^" + re.escape(BUTTON_PREFIX)))(self._on_action)
        app.command(SLASH_COMMANDS)(self._on_command)

    async def _ledger(self, body: dict[str, Any], next: Any) -> Any:
        """Record the delivery before bolt acknowledges it; a replay is acknowledged
        and goes no further."""
        event_id = _delivery_id(body)
        if event_id is not None and self.record_event(self._sink, event_id) == "seen":
            return BoltResponse(status=200, body="")
        return await next()

    async def _on_message(self, event: dict[str, Any], body: dict[str, Any]) -> None:
        private = event.get("channel_type") == "im"
        if not private and self._require_mention:
            return  # channels: app_mention brings the ones addressed to the bot
        await self._take(event, body)

    async def _on_mention(self, event: dict[str, Any], body: dict[str, Any]) -> None:
        if self._require_mention:
            await self._take(event, body)

    async def _take(self, event: dict[str, Any], body: dict[str, Any]) -> None:
        assert self.bot_user_id is not None
        if not is_from_a_person(event, self.bot_user_id):
            return
        message = event_from_message(event, body.get("event_id"), self.bot_user_id)
        if not message.text and not message.media:
            return
        files = event.get("files") or []
        if files and self._may_save_files(message):
            assert self._attachments_dir is not None
            notes, saved = await save_files(
                files, self._attachments_dir, self._max_attachment_bytes, self._secrets.bot_token
            )
            message = replace(message, media=notes, files=saved)
        self.spawn_dispatch(self._sink, message, self._tasks)

    def _may_save_files(self, event: MessageEvent) -> bool:
        """Files reach the workdir only from users on this platform's allowlist: anyone
        in the workspace could otherwise write files next to the owner's work."""
        return self._attachments_dir is not None and allowlist_matches(self._allowed_users, event)

    async def _on_action(self, ack: Any, body: dict[str, Any], action: dict[str, Any]) -> None:
        await ack()
        self.spawn_dispatch(self._sink, event_from_action(body, action), self._tasks)

    async def _on_command(self, ack: Any, command: dict[str, Any]) -> None:
        await ack()
        self.spawn_dispatch(self._sink, event_from_command(command), self._tasks)


def _error_code(error: SlackApiError) -> str:
    """Slack's error code; empty when the answer was not Slack's JSON (a proxy's 5xx)."""
    data = error.response.data
    return str(data.get("error") or "") if isinstance(data, dict) else ""


def _delivery_id(body: dict[str, Any]) -> str | None:
    """What the ledger knows a delivery by: Slack's event_id, or an interaction's
    trigger id (a press or a slash command, resent as the same)."""
    if body.get("event_id"):
        return str(body["event_id"])
    trigger = body.get("trigger_id")
    if not trigger:
        return None
    kind = "command" if body.get("command") else "action"
    return f"{kind}:{trigger}"


def _blocks(text: str, buttons: list[list[Button]]) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = [
        {"type": "section", "text": {"type": "mrkdwn", "text": text[:3000]}}
    ]
    for row_index, row in enumerate(buttons[:5]):
        blocks.append(
            {
                "type": "actions",
                "block_id": f"herald-{row_index}",
                "elements": [
                    {
                        "type": "button",
                        "action_id": f"{BUTTON_PREFIX}{row_index}.{i}",
                        "value": button.data[:2000],
                        "text": {"type": "plain_text", "text": button.label[:75], "emoji": True},
                    }
                    for i, button in enumerate(row[:5])
                ],
            }
        )
    return blocks


def create_adapter(
    config: HeraldConfig | SlackPlatformConfig,
    secrets: Secrets,
    *,
    settings: Settings | None = None,
    home: HeraldHome | None = None,
) -> SlackAdapter:
    """The Slack adapter from `gateway.platforms.slack` (the whole config or just that
    section); `settings` supplies the watchdog's slack and the workdir."""
    from herald.config.schema_slack import SlackPlatformConfig

    section = config.gateway.platforms.slack if hasattr(config, "gateway") else config
    if not isinstance(section, SlackPlatformConfig):
        raise TypeError(f"expected HeraldConfig or SlackPlatformConfig, not {type(config)}")
    attachments_dir = None
    if section.download_attachments and settings is not None:
        attachments_dir = Path(settings.config.gateway.cwd or Path.cwd()) / "attachments"
    return SlackAdapter(
        resolve_secrets(section, secrets),
        mode=section.mode,
        api_url=section.api_url,
        require_mention=section.require_mention,
        ping_interval=section.ping_interval,
        silence_slack=settings.config.gateway.watchdog.slack_seconds if settings else 15.0,
        host=section.host,
        port=section.port,
        path=section.path,
        attachments_dir=attachments_dir,
        max_attachment_bytes=int(section.max_attachment_mb * 1024 * 1024),
        allowed_users=tuple(str(u) for u in section.allowed_users),
    )


__all__ = ["SlackAdapter", "SlackConnectError", "create_adapter"]
