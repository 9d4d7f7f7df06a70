"""Discord: discord.py's gateway client inside the gateway's own event loop.

DMs are always taken; in guild channels a message must mention the bot or reply to
it (`require_mention`), except in threads the bot started. Button presses (custom id
``herald:<data>``) and the slash commands /stop, /new, /usage and /agents become
`MessageEvent`s whose text is the command they stand for; who may press what is the
runner's call (only approvers approve). Every event is recorded in the inbound
ledger before it is answered, so a replayed MESSAGE_CREATE is answered once.

The library owns the connection: heartbeats, RESUME after a drop, identify after an
invalid session, and 429 buckets (Herald never retries a send on its own). The
health recorder hears every dispatch, every heartbeat ack and every disconnect.
Intents are the minimum: guilds, guild and DM messages, and message content (a
privileged intent the bot must be granted in the Developer Portal).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

import discord
from discord import app_commands
from discord.http import handle_message_parameters

from herald.gateway.aio import end_task
from herald.gateway.auth import allowlist_matches
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
from herald.gateway.platforms.discord.attachments import save_attachments
from herald.gateway.platforms.discord.config import TOKEN_SETTING, resolve_token
from herald.gateway.platforms.discord.connection import make_client
from herald.gateway.platforms.discord.events import (
    BUTTON_PREFIX,
    addressed_to_bot,
    button_data,
    event_from_interaction,
    event_from_message,
)

if TYPE_CHECKING:
    from herald.config import HeraldConfig, HeraldHome, Secrets, Settings
    from herald.config.schema_discord import DiscordPlatformConfig

log = logging.getLogger(__name__)

DISCORD_MAX_MESSAGE_LENGTH = 2000
SLASH_COMMANDS = {
    "stop": "Stop the running turn",
    "new": "Start a new session",
    "usage": "Tokens and cost so far",
    "agents": "Running sub-agents",
}
DISCORD_HEARTBEAT_SECONDS = 41.25  # what Discord's HELLO asks for; the real one replaces it


class DiscordConnectError(RuntimeError):
    """Discord refused the bot or could not be reached at start-up."""


def minimal_intents() -> discord.Intents:
    intents = discord.Intents.none()
    intents.guilds = True  # channels and threads in the cache
    intents.guild_messages = True
    intents.dm_messages = True
    intents.message_content = True  # privileged: enable it in the Developer Portal
    return intents


class DiscordAdapter(PlatformAdapter):
    name = "discord"
    push_replies = True

    def __init__(
        self,
        token: str,
        *,
        api_base: str | None = None,
        gateway_url: str | None = None,
        require_mention: bool = True,
        slash_commands: bool = True,
        heartbeat_timeout: float = 60.0,
        silence_slack: float = 15.0,
        attachments_dir: Path | None = None,
        max_attachment_bytes: int = 8 * 1024 * 1024,
        allowed_users: tuple[str, ...] = (),
        drain_timeout: float = 10.0,
        ready_timeout: float = 30.0,
        guild_ready_timeout: float = 2.0,
    ) -> None:
        self._token = token
        self._api_base = api_base
        self._gateway_url = gateway_url
        self._require_mention = require_mention
        self._slash_commands = slash_commands
        self._heartbeat_timeout = heartbeat_timeout
        self._silence_slack = silence_slack
        self._attachments_dir = attachments_dir
        self._max_attachment_bytes = max_attachment_bytes
        self._allowed_users = allowed_users
        self._drain_timeout = drain_timeout
        self._ready_timeout = ready_timeout
        self._guild_ready_timeout = guild_ready_timeout
        self._client: Any = None
        self._runner: asyncio.Task[None] | None = None
        self._sink: EventSink | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.bot_id: int | None = None

    # ---- lifecycle --------------------------------------------------------------------------

    async def connect(self, sink: EventSink) -> None:
        if self._client is not None:
            raise RuntimeError("the Discord adapter is already connected")
        self._sink = sink
        try:
            self._client, self._runner = await self._open(adopt=True)
        except BaseException:
            self._client = None
            raise
        self.health.connected()

    async def _open(self, *, adopt: bool = False) -> tuple[Any, asyncio.Task[None]]:
        """A logged-in client whose gateway session is READY, with its run task.
        `adopt`: replies use it from login on (messages can arrive before READY ends)."""
        client = make_client(
            intents=minimal_intents(),
            api_base=self._api_base,
            gateway_url=self._gateway_url,
            client_class=_client_class(),
            heartbeat_timeout=self._heartbeat_timeout,
            guild_ready_timeout=self._guild_ready_timeout,
            enable_debug_events=True,  # raw receives: heartbeat acks for the recorder
            allowed_mentions=discord.AllowedMentions.none(),
        )
        client.herald = self
        try:
            await client.login(self._token)
        except discord.LoginFailure:
            await client.close()
            raise DiscordConnectError(f"Discord rejected the bot token ({TOKEN_SETTING})") from None
        except (discord.HTTPException, OSError) as error:
            await client.close()
            raise DiscordConnectError(f"cannot reach Discord: {error}") from None
        except BaseException:  # cancelled (a stop during start-up): its session closed
            await _close(client, None)
            raise
        self.bot_id = client.user.id  # known from login; events may come before READY ends
        if adopt:
            self._client = client
        runner = asyncio.get_running_loop().create_task(
            client.connect(reconnect=True), name="discord:gateway"
        )
        ready = asyncio.ensure_future(client.wait_until_ready())
        try:
            done, _ = await asyncio.wait(
                {ready, runner}, timeout=self._ready_timeout, return_when=asyncio.FIRST_COMPLETED
            )
        except BaseException:  # cancelled: no client, heartbeat thread or task left behind
            ready.cancel()
            await _close(client, runner)
            raise
        if ready not in done:
            ready.cancel()
            await client.close()
            error = runner.exception() if runner in done else None
            runner.cancel()
            reason = str(error) if error else f"no READY within {self._ready_timeout:g} s"
            raise DiscordConnectError(f"the Discord gateway did not open: {reason}")
        interval = getattr(getattr(client.ws, "_keep_alive", None), "interval", None)
        self.health.rhythm = Rhythm.websocket(
            interval or DISCORD_HEARTBEAT_SECONDS, self._silence_slack
        )
        log.info("discord: connected as %s", client.user)
        return client, runner

    async def disconnect(self) -> None:
        client, runner = self._client, self._runner
        if client is None:
            return
        self._client = self._runner = None
        try:
            pending = {task for task in self._tasks if not task.done()}
            if pending:
                _, late = await asyncio.wait(pending, timeout=self._drain_timeout)
                for task in late:
                    task.cancel()
        finally:
            await _close(client, runner)
            self.health.stopped()

    async def reconnect(self, sink: EventSink) -> None:
        """Get a live link back without losing events: while the client runs, its
        websocket is closed as resumable (4000), so the library RESUMEs the session and
        Discord replays what was missed; a new session would not get those. Only a
        client that stopped is replaced by a new one (turns in flight reply through it)."""
        self._sink = sink
        client, runner = self._client, self._runner
        if (
            client is not None
            and runner is not None
            and not runner.done()
            and not client.is_closed()
        ):
            self.health.reconnecting("resuming the gateway session")
            ws = client.ws
            if ws is not None:
                with contextlib.suppress(Exception):
                    await ws.close(code=4000)
            return
        self.health.reconnecting("opening a new gateway session")
        client, runner = await self._open()
        old_client, old_runner = self._client, self._runner
        self._client, self._runner = client, runner
        if old_client is not None:
            await _close(old_client, old_runner)

    def expected_rhythm(self) -> Rhythm:
        return Rhythm.websocket(DISCORD_HEARTBEAT_SECONDS, self._silence_slack)

    # ---- capabilities -----------------------------------------------------------------------

    def max_message_length(self, chat_id: str) -> int:
        return DISCORD_MAX_MESSAGE_LENGTH

    def supports_edits(self) -> bool:
        return True

    def supports_buttons(self) -> bool:
        return True

    def supports_threads(self) -> bool:
        return True

    def markdown_flavour(self) -> str:
        return "commonmark"  # Discord renders Markdown itself

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
        client = self._client
        if client is None:
            return SendResult(ok=False, error="the Discord adapter is not connected")
        target = _snowflake(thread_id or chat_id)
        if target is None:
            return SendResult(ok=False, permanent_failure=True, error=f"bad channel {chat_id!r}")
        if not text.strip():
            return SendResult(ok=False, error="refusing to send an empty message")
        reference = None
        if _snowflake(reply_to) is not None:
            reference = discord.MessageReference(
                message_id=int(reply_to),  # type: ignore[arg-type]
                channel_id=target,
                fail_if_not_exists=False,
            )
        params = handle_message_parameters(
            content=text,
            allowed_mentions=discord.AllowedMentions.none(),  # model text never pings anyone
            message_reference=(
                reference.to_message_reference_dict()  # type: ignore[arg-type]
                if reference is not None
                else discord.utils.MISSING
            ),
            view=_view(buttons) if buttons else discord.utils.MISSING,
        )
        try:
            with params:
                data = await client.http.send_message(target, params=params)
        except Exception as error:
            return self._failed("send", error)
        self.health.sent()
        return SendResult(ok=True, message_ids=[str(data["id"])])

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
        """A message with the file attached (multipart `files[0]`), the caption as its
        content; mentions in the caption ping nobody."""
        client = self._client
        if client is None:
            return SendResult(ok=False, error="the Discord adapter is not connected")
        target = _snowflake(thread_id or chat_id)
        if target is None:
            return SendResult(ok=False, permanent_failure=True, error=f"bad channel {chat_id!r}")
        params = handle_message_parameters(
            content=(caption or "")[:DISCORD_MAX_MESSAGE_LENGTH] or discord.utils.MISSING,
            file=discord.File(io.BytesIO(file.data), filename=file.name),
            allowed_mentions=discord.AllowedMentions.none(),
        )
        try:
            with params:
                data = await client.http.send_message(target, params=params)
        except Exception as error:
            return self._failed("file upload", error)
        self.health.sent()
        return SendResult(ok=True, message_ids=[str(data["id"])])

    async def edit(self, chat_id: str, message_id: str, text: str) -> SendResult:
        """Replace a message's text; its buttons go away (an answered approval's buttons
        must not be pressed twice)."""
        client, message = self._client, _snowflake(message_id)
        if client is None:
            return SendResult(ok=False, error="the Discord adapter is not connected")
        channel = _snowflake(chat_id)
        if message is None or channel is None:
            return SendResult(ok=False, error=f"bad message reference {chat_id}/{message_id}")
        params = handle_message_parameters(
            content=text, view=None, allowed_mentions=discord.AllowedMentions.none()
        )
        try:
            with params:
                await client.http.edit_message(channel, message, params=params)
        except Exception as error:
            return self._failed("edit", error)
        return SendResult(ok=True, message_ids=[str(message)])

    def _failed(self, what: str, error: Exception) -> SendResult:
        permanent = isinstance(error, discord.Forbidden | discord.NotFound)
        if isinstance(error, discord.HTTPException):
            reason = f"Discord refused the {what}: {error.status} {error.text or ''}".strip()
        else:
            reason = f"the {what} did not reach Discord: {error!r}"
        if not permanent:
            self.health.error(reason)
        log.warning("discord: %s", reason)
        return SendResult(ok=False, permanent_failure=permanent, error=reason)

    async def typing(self, chat_id: str, thread_id: str | None = None) -> None:
        client, target = self._client, _snowflake(thread_id or chat_id)
        if client is None or target is None:
            return
        try:
            await client.http.send_typing(target)
        except Exception as error:  # a lost typing indicator is not worth an error
            log.debug("discord: typing in %s failed: %s", target, error)

    # ---- input (called by the client) ---------------------------------------------------------

    def on_raw_receive(self, raw: str | bytes) -> None:
        try:
            op = json.loads(raw).get("op")
        except (ValueError, AttributeError):
            return
        if op == 11:
            self.health.heartbeat_ack()
        elif op == 0:
            self.health.received()

    def on_disconnect(self) -> None:
        if self._client is not None:
            self.health.reconnecting("gateway connection lost; the library is resuming")

    async def on_message(self, message: Any) -> None:
        if message.author.bot or self.bot_id is None:
            return  # itself, and other bots (answering them invites loops)
        if self._needs_mention(message) and not addressed_to_bot(message, self.bot_id):
            return
        event = event_from_message(message, self.bot_id)
        if not event.text and not event.media:
            return
        if self.record_event(self._sink, event.event_id) == "seen":
            return
        if self._may_save_files(event):
            assert self._attachments_dir is not None
            notes, files = await save_attachments(
                message.attachments, self._attachments_dir, self._max_attachment_bytes
            )
            event = _with_media(event, notes, files)
        self.spawn_dispatch(self._sink, event, self._tasks)

    async def on_interaction(self, interaction: Any) -> None:
        if interaction.type is not discord.InteractionType.component:
            return  # slash commands are the command tree's
        data = button_data((interaction.data or {}).get("custom_id"))
        if data is None:
            return
        with contextlib.suppress(discord.HTTPException):
            await interaction.response.defer()  # acknowledge within Discord's 3 s
        event = event_from_interaction(interaction, data)
        if self.record_event(self._sink, event.event_id) != "seen":
            self.spawn_dispatch(self._sink, event, self._tasks)

    async def on_slash_command(self, interaction: Any, name: str) -> None:
        with contextlib.suppress(discord.HTTPException):
            await interaction.response.send_message(f"/{name}")
        event = event_from_interaction(interaction, f"/{name}")
        if self.record_event(self._sink, event.event_id) != "seen":
            self.spawn_dispatch(self._sink, event, self._tasks)

    def _needs_mention(self, message: Any) -> bool:
        """Guild channels need a mention or a reply, except threads the bot started."""
        if message.guild is None or not self._require_mention:
            return False
        return getattr(message.channel, "owner_id", None) != self.bot_id

    def _may_save_files(self, event: MessageEvent) -> bool:
        """Files reach the workdir only from users on this platform's allowlist: anyone
        in a guild could otherwise write files next to the owner's work."""
        raw = event.raw
        if not getattr(raw, "attachments", None) or self._attachments_dir is None:
            return False
        return allowlist_matches(self._allowed_users, event)

    def slash_commands_enabled(self) -> bool:
        return self._slash_commands


def _client_class() -> type:
    """discord.Client with Herald's event handlers and slash commands, built on first use."""

    class HeraldDiscordClient(discord.Client):
        herald: DiscordAdapter

        def __init__(self, **options: Any) -> None:
            super().__init__(**options)
            self.tree = app_commands.CommandTree(self)

        async def setup_hook(self) -> None:
            if not self.herald.slash_commands_enabled:
                return
            for name, description in SLASH_COMMANDS.items():
                self.tree.add_command(_slash(self.herald, name, description))
            try:
                await self.tree.sync()
            except discord.HTTPException as error:
                log.warning("discord: could not register slash commands: %s", error)

        async def on_socket_raw_receive(self, raw: str) -> None:
            self.herald.on_raw_receive(raw)

        async def on_disconnect(self) -> None:
            self.herald.on_disconnect()

        async def on_resumed(self) -> None:
            self.herald.health.received()

        async def on_message(self, message: discord.Message) -> None:
            await self.herald.on_message(message)

        async def on_interaction(self, interaction: discord.Interaction) -> None:
            await self.herald.on_interaction(interaction)

    return HeraldDiscordClient


def _slash(adapter: DiscordAdapter, name: str, description: str) -> Any:
    async def run(interaction: discord.Interaction) -> None:
        await adapter.on_slash_command(interaction, name)

    return app_commands.Command(name=name, description=description, callback=run)


def _view(buttons: list[list[Button]]) -> discord.ui.View:
    view = discord.ui.View(timeout=None)
    for row_index, row in enumerate(buttons[:5]):
        for button in row[:5]:
            view.add_item(
                discord.ui.Button(
                    label=button.label[:80],
                    custom_id=(BUTTON_PREFIX + button.data)[:100],
                    row=row_index,
                )
            )
    return view


def _with_media(
    event: MessageEvent, notes: tuple[str, ...], files: tuple[InboundFile, ...]
) -> MessageEvent:
    from dataclasses import replace

    return replace(event, media=notes, files=files)


def _snowflake(value: str | None) -> int | None:
    if value is None or not str(value).isdigit():
        return None
    return int(value)


async def _close(client: Any, runner: asyncio.Task[None] | None) -> None:
    try:
        await client.close()
    except Exception as error:
        log.debug("discord: closing the client failed: %s", error)
    if runner is not None:
        await end_task(runner)


def create_adapter(
    config: HeraldConfig | DiscordPlatformConfig,
    secrets: Secrets,
    *,
    settings: Settings | None = None,
    home: HeraldHome | None = None,
) -> DiscordAdapter:
    """The Discord adapter from `gateway.platforms.discord` (the whole config or just
    that section); `settings` supplies the watchdog's slack and the workdir."""
    from herald.config.schema_discord import DiscordPlatformConfig

    section = config.gateway.platforms.discord if hasattr(config, "gateway") else config
    if not isinstance(section, DiscordPlatformConfig):
        raise TypeError(f"expected HeraldConfig or DiscordPlatformConfig, not {type(config)}")
    attachments_dir = None
    if section.download_attachments and settings is not None:
        attachments_dir = Path(settings.config.gateway.cwd or Path.cwd()) / "attachments"
    return DiscordAdapter(
        resolve_token(section.token, secrets),
        api_base=section.api_base,
        gateway_url=section.gateway_url,
        require_mention=section.require_mention,
        slash_commands=section.slash_commands,
        heartbeat_timeout=section.heartbeat_timeout,
        silence_slack=settings.config.gateway.watchdog.slack_seconds if settings else 15.0,
        attachments_dir=attachments_dir,
        max_attachment_bytes=int(section.max_attachment_mb * 1024 * 1024),
        allowed_users=tuple(str(u) for u in section.allowed_users),
    )


__all__ = ["DiscordAdapter", "DiscordConnectError", "create_adapter", "minimal_intents"]
