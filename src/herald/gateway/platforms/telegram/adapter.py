"""Telegram: python-telegram-bot long polling inside the gateway's own event loop.

Every text message (commands included, `/cmd@thisbot` passed through as written),
captioned or bare attachment (noted in `media`, not downloaded) and inline-button
press becomes a `MessageEvent` handed to the runner as its own task, so one chat's
slow turn never holds up the polling loop or another chat. Edited messages, service
messages, other bots and `/cmd@otherbot` are ignored. Replies go out as Telegram HTML
rendered from the runner's Markdown, falling back to plain text if Telegram refuses
the markup; `delivery` maps the Bot API's failures onto `SendResult`.

Authorization is the runner's job: the adapter reports `user_id` and the @username
(`user_name`, without the @) faithfully and filters nobody.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import warnings
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from telegram import (
    BotCommand,
    InputFile,
    Message,
    ReplyParameters,
    Update,
)
from telegram.constants import ChatAction, ParseMode
from telegram.error import Conflict, InvalidToken, TelegramError
from telegram.ext import (
    Application,
    ApplicationBuilder,
    CallbackQueryHandler,
    ContextTypes,
    MessageHandler,
    filters,
)
from telegram.request import HTTPXRequest
from telegram.warnings import PTBDeprecationWarning

from herald.config.schema_gateway import TelegramPlatformConfig
from herald.gateway.aio import end_task
from herald.gateway.contracts import (
    Button,
    EventSink,
    OutgoingFile,
    PlatformAdapter,
    SendResult,
)
from herald.gateway.health import Rhythm
from herald.gateway.platforms.telegram.buttons import CallbackData
from herald.gateway.platforms.telegram.config import (
    TOKEN_SETTING,
    TelegramConfigError,
    resolve_token,
)
from herald.gateway.platforms.telegram.delivery import Attempt, deliver
from herald.gateway.platforms.telegram.events import (
    addressed_elsewhere,
    event_from_callback,
    event_from_message,
    inbound_files,
    is_start_command,
)
from herald.gateway.platforms.telegram.format import (
    TELEGRAM_MAX_MESSAGE_LENGTH,
    markdown_to_html,
    utf16_length,
)
from herald.gateway.platforms.telegram.logs import mask_tokens_in_logs

if TYPE_CHECKING:
    from herald.config import HeraldConfig, HeraldHome, Secrets, Settings

log = logging.getLogger(__name__)

# python-telegram-bot warns about its own int-vs-timedelta migration from inside
# `RetryAfter.__init__`; nothing here can change that, so it is not news in our logs.
warnings.filterwarnings(
    "ignore",
    message=r"Deprecated since version v22\.2: In a future major version attribute "
    r"`(retry_after|duration)`",
    category=PTBDeprecationWarning,
)

_UPDATE_KINDS = [Update.MESSAGE, Update.CALLBACK_QUERY]  # edited messages are never fetched


class TelegramConnectError(RuntimeError):
    """Telegram refused the bot or could not be reached at start-up."""


class TelegramAdapter(PlatformAdapter):
    name = "telegram"
    push_replies = True

    def __init__(
        self,
        token: str,
        *,
        base_url: str | None = None,
        poll_timeout: float = 25.0,
        max_retry_after: float = 10.0,
        drain_timeout: float = 10.0,
        register_commands: bool = True,
        silence_slack: float = 15.0,
        poll_read_grace: float = 10.0,
        poll_backoff: float = 1.0,
        download_files: bool = True,
    ) -> None:
        self._token = token
        self._download_files = download_files
        self._silence_slack = silence_slack
        self._poll_read_grace = poll_read_grace
        self._poll_backoff = poll_backoff
        self._offset: int | None = None  # the next update to fetch; kept across reconnects
        self._poller: asyncio.Task[None] | None = None
        self._retiring: set[asyncio.Task[None]] = set()
        self._base_url = base_url.rstrip("/") if base_url else None
        self._poll_timeout = poll_timeout
        self._max_retry_after = max_retry_after
        self._drain_timeout = drain_timeout
        self._register_commands = register_commands
        self._app: Application[Any, Any, Any, Any, Any, Any] | None = None
        self._sink: EventSink | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._migrated: dict[int, int] = {}  # group id -> the supergroup it became
        self._callback_data = CallbackData()
        self.bot_username: str | None = None

    # ---- lifecycle --------------------------------------------------------------------------

    async def connect(self, sink: EventSink) -> None:
        if self._app is not None:
            raise RuntimeError("the Telegram adapter is already connected")
        self._sink = sink
        mask_tokens_in_logs()
        app = await self._open_app()
        self._app = app
        self.bot_username = app.bot.username
        try:
            if self._register_commands:
                await self._set_commands()
            await app.start()
        except BaseException:
            await self.disconnect()  # a failed connect leaves nothing open behind it
            raise
        self._start_polling(app)
        self.health.connected()
        log.info("telegram: polling as @%s", self.bot_username)

    async def _open_app(self) -> Application[Any, Any, Any, Any, Any, Any]:
        """A new client with the handlers, its token proven by getMe. No `Updater`: the
        adapter runs the long poll itself (`_poll`), so it knows when each poll returns
        and can record every update before Telegram is told it arrived."""
        # Two polling connections: a cancelled long poll can keep its slot busy a while,
        # and the final getUpdates that confirms the offset needs the other one.
        builder = (
            ApplicationBuilder()
            .token(self._token)
            .job_queue(None)
            .updater(None)
            .request(_send_request())
            .get_updates_request(HTTPXRequest(connection_pool_size=2))
        )
        if self._base_url:
            builder = builder.base_url(self._base_url).base_file_url(_file_url(self._base_url))
        app = builder.build()
        app.add_handler(
            MessageHandler(filters.UpdateType.MESSAGE & ~filters.StatusUpdate.ALL, self._on_message)
        )
        app.add_handler(CallbackQueryHandler(self._on_callback))
        app.add_error_handler(self._on_handler_error)
        try:
            await app.initialize()  # getMe: proves the token
        except TelegramError as error:
            await app.bot.shutdown()  # the HTTP clients were opened before getMe failed
            if isinstance(error, InvalidToken):
                # The library's message quotes the token itself; never pass it on.
                raise TelegramConnectError(
                    f"Telegram rejected the bot token ({TOKEN_SETTING})"
                ) from None
            raise TelegramConnectError(f"cannot reach Telegram: {error.message}") from None
        return app

    async def disconnect(self) -> None:
        """Stop fetching and confirm what was fetched (updates already fetched are still
        dispatched), give in-flight dispatches `drain_timeout` to finish (their replies
        still go out), then close the HTTP client."""
        app = self._app
        if app is None:
            return
        try:
            await self._stop_polling()
            if self._retiring:  # clients replaced by reconnects, still closing
                await asyncio.gather(*self._retiring, return_exceptions=True)
            await self._confirm_offset(app)
            if app.running:
                await app.stop()
            pending = {task for task in self._tasks if not task.done()}
            if pending:
                _, late = await asyncio.wait(pending, timeout=self._drain_timeout)
                for task in late:
                    task.cancel()
                if late:
                    log.warning("telegram: %d dispatches still running at disconnect", len(late))
        finally:
            self._app = None
            await app.shutdown()
            self.health.stopped()

    async def reconnect(self, sink: EventSink) -> None:
        """A fresh client and long poll; the dispatches in flight keep running and reply
        through the new client. If Telegram cannot be reached, the old poll goes on
        retrying by itself and the error is raised for the watchdog to back off."""
        self._sink = sink
        old = self._app
        await self._stop_polling()
        self.health.reconnecting("restarting the long poll")
        try:
            app = await self._open_app()
            await app.start()
        except BaseException:
            if old is not None:
                self._start_polling(old)
            raise
        self._app = app
        self.bot_username = app.bot.username
        self._start_polling(app)
        if old is not None:
            retiring = asyncio.get_running_loop().create_task(_retire(old))
            self._retiring.add(retiring)
            retiring.add_done_callback(self._retiring.discard)

    def expected_rhythm(self) -> Rhythm:
        return Rhythm.long_poll(self._poll_timeout, self._silence_slack)

    # ---- the long poll ------------------------------------------------------------------------

    def _start_polling(self, app: Application[Any, Any, Any, Any, Any, Any]) -> None:
        self._poller = asyncio.get_running_loop().create_task(self._poll(app), name="telegram:poll")

    async def _stop_polling(self) -> None:
        poller, self._poller = self._poller, None
        if poller is None:
            return
        await end_task(poller)

    async def _poll(self, app: Application[Any, Any, Any, Any, Any, Any]) -> None:
        """getUpdates in a loop. Every update is recorded in the inbound ledger before
        the next getUpdates confirms it to Telegram (its offset), so a replay — after a
        reconnect or a restart — is recognised and answered at most once."""
        failures = 0
        while True:
            try:
                updates = await app.bot.get_updates(
                    offset=self._offset,
                    timeout=int(self._poll_timeout),
                    read_timeout=self._poll_read_grace,
                    allowed_updates=_UPDATE_KINDS,
                )
            except asyncio.CancelledError:
                raise
            except Exception as error:  # network, 5xx, 409: wait a little, poll again
                failures += 1
                self._on_polling_error(error)
                await asyncio.sleep(min(self._poll_backoff * 2 ** min(failures - 1, 8), 30.0))
                continue
            failures = 0
            self.health.received()  # an empty poll that returned in time is a live link
            for update in updates:
                self._offset = update.update_id + 1
                if self.record_event(self._sink, str(update.update_id)) == "seen":
                    continue
                await app.update_queue.put(update)

    async def _confirm_offset(self, app: Application[Any, Any, Any, Any, Any, Any]) -> None:
        """Tell Telegram the fetched updates arrived, so a restart does not fetch them
        again (the ledger would drop them, but there is no need to ask)."""
        if self._offset is None:
            return
        try:
            await app.bot.get_updates(
                offset=self._offset, timeout=0, read_timeout=2, allowed_updates=_UPDATE_KINDS
            )
        except Exception as error:
            log.debug("telegram: confirming the update offset failed: %s", error)

    # ---- capabilities -----------------------------------------------------------------------

    def max_message_length(self, chat_id: str) -> int:
        return TELEGRAM_MAX_MESSAGE_LENGTH

    def measure(self, text: str) -> int:
        return utf16_length(text)

    def supports_edits(self) -> bool:
        return True

    def supports_buttons(self) -> bool:
        return True

    def supports_threads(self) -> bool:
        return True

    def markdown_flavour(self) -> str:
        # The adapter takes Markdown and renders Telegram HTML itself.
        return "commonmark"

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
            return SendResult(ok=False, error="the Telegram adapter is not connected")
        target = self._target(chat_id)
        if target is None:
            return SendResult(ok=False, permanent_failure=True, error=f"bad chat id {chat_id!r}")
        if not text.strip():
            return SendResult(ok=False, error="refusing to send an empty message")
        markup = self._callback_data.keyboard(buttons)
        rendered = markdown_to_html(text)
        reply = (
            ReplyParameters(int(reply_to), allow_sending_without_reply=True)
            if reply_to and reply_to.lstrip("-").isdigit()
            else None
        )

        async def operation(attempt: Attempt) -> Message:
            return await app.bot.send_message(
                chat_id=attempt.chat_id,
                text=rendered if attempt.html else text,
                parse_mode=ParseMode.HTML if attempt.html else None,
                message_thread_id=attempt.thread_id,
                reply_parameters=reply,
                reply_markup=markup,
            )

        attempt = Attempt(chat_id=target, thread_id=_int_or_none(thread_id))
        return await deliver(
            operation,
            attempt,
            max_retry_after=self._max_retry_after,
            on_migrated=self._remember_migration,
        )

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
        """sendDocument (sendVoice for a spoken reply): the bytes as a multipart upload,
        the caption as plain text (a caption is at most 1,024 characters; a longer one is
        cut)."""
        app = self._app
        if app is None:
            return SendResult(ok=False, error="the Telegram adapter is not connected")
        target = self._target(chat_id)
        if target is None:
            return SendResult(ok=False, permanent_failure=True, error=f"bad chat id {chat_id!r}")
        reply = (
            ReplyParameters(int(reply_to), allow_sending_without_reply=True)
            if reply_to and reply_to.lstrip("-").isdigit()
            else None
        )

        async def operation(attempt: Attempt) -> Message:
            if file.voice:  # a spoken reply: sendVoice, played in the chat
                return await app.bot.send_voice(
                    chat_id=attempt.chat_id,
                    voice=InputFile(file.data, filename=file.name),
                    caption=(caption or None) and caption[:1024],
                    message_thread_id=attempt.thread_id,
                    reply_parameters=reply,
                )
            return await app.bot.send_document(
                chat_id=attempt.chat_id,
                document=InputFile(file.data, filename=file.name),
                caption=(caption or None) and caption[:1024],
                message_thread_id=attempt.thread_id,
                reply_parameters=reply,
            )

        attempt = Attempt(chat_id=target, html=False, thread_id=_int_or_none(thread_id))
        return await deliver(
            operation,
            attempt,
            max_retry_after=self._max_retry_after,
            on_migrated=self._remember_migration,
        )

    async def edit(self, chat_id: str, message_id: str, text: str) -> SendResult:
        """Replace a message's text; its inline keyboard goes away (a pressed approval's
        buttons must not be pressed twice). An unchanged text counts as success."""
        app = self._app
        if app is None:
            return SendResult(ok=False, error="the Telegram adapter is not connected")
        target, message = self._target(chat_id), _int_or_none(message_id)
        if target is None or message is None:
            return SendResult(ok=False, error=f"bad message reference {chat_id}/{message_id}")
        rendered = markdown_to_html(text)

        async def operation(attempt: Attempt) -> Message | bool:
            return await app.bot.edit_message_text(
                chat_id=attempt.chat_id,
                message_id=message,
                text=rendered if attempt.html else text,
                parse_mode=ParseMode.HTML if attempt.html else None,
            )

        result = await deliver(
            operation,
            Attempt(chat_id=target),
            max_retry_after=self._max_retry_after,
            on_migrated=self._remember_migration,
            ok_when_not_modified=True,
        )
        if result.ok:
            result.message_ids = [str(message)]
        return result

    async def typing(self, chat_id: str, thread_id: str | None = None) -> None:
        """Best effort: a lost typing indicator is not worth an error or a retry."""
        app, target = self._app, self._target(chat_id)
        if app is None or target is None:
            return
        try:
            await app.bot.send_chat_action(
                chat_id=target, action=ChatAction.TYPING, message_thread_id=_int_or_none(thread_id)
            )
        except TelegramError as error:
            log.debug("telegram: typing in %s failed: %s", chat_id, error.message)

    # ---- input ------------------------------------------------------------------------------

    async def _on_message(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        message = update.message
        if message is None:
            return
        sender = message.from_user
        if sender is not None and sender.is_bot:
            return  # other bots in a group: answering them invites loops
        event = replace(event_from_message(message), event_id=str(update.update_id))
        if not event.text.strip() and not event.media:
            return
        if self._download_files:
            event = replace(event, files=inbound_files(message, self._fetcher))
        if addressed_elsewhere(event.text, self.bot_username):
            return
        if is_start_command(event.text):
            # Telegram clients send /start when someone opens the bot: answer with /help.
            event = replace(event, text="/help")
        self.spawn_dispatch(self._sink, event, self._tasks)

    async def _on_callback(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        query = update.callback_query
        if query is None:
            return
        data = self._callback_data.decode(query.data)
        notice = None if data is not None else "This button has expired."
        try:
            await query.answer(text=notice)  # stops the button's loading spinner
        except TelegramError as error:
            log.debug("telegram: answering a button press failed: %s", error.message)
        message = query.message
        if data is None or not isinstance(message, Message):
            return  # an expired key, or a message too old for Telegram to show us
        event = event_from_callback(query, data, message)
        self.spawn_dispatch(self._sink, replace(event, event_id=str(update.update_id)), self._tasks)

    async def _on_handler_error(self, update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
        log.error("telegram: handling an update failed", exc_info=context.error)

    def _on_polling_error(self, error: Exception) -> None:
        if isinstance(error, Conflict):
            reason = "another process is polling with this bot token"
        else:
            detail = getattr(error, "message", None) or repr(error)
            reason = f"getUpdates failed: {detail}"
        self.health.error(reason)
        log.warning("telegram: %s; retrying", reason)

    async def _set_commands(self) -> None:
        from herald.engine.commands import commands_for

        assert self._app is not None
        commands = [BotCommand(spec.name, spec.help[:256]) for spec in commands_for("gateway")]
        try:
            await self._app.bot.set_my_commands(commands)
        except TelegramError as error:
            log.warning("telegram: could not register the command menu: %s", error.message)

    def _fetcher(self, file_id: str) -> Callable[[], Awaitable[bytes]]:
        """A download of `file_id` (getFile, then the file URL) for the runner to call."""

        async def fetch() -> bytes:
            app = self._app
            if app is None:
                raise RuntimeError("the Telegram adapter is not connected")
            remote = await app.bot.get_file(file_id)
            return bytes(await remote.download_as_bytearray())

        return fetch

    # ---- helpers ----------------------------------------------------------------------------

    def _target(self, chat_id: str) -> int | None:
        number = _int_or_none(chat_id)
        if number is None:
            return None
        return self._migrated.get(number, number)

    def _remember_migration(self, old: int, new: int) -> None:
        self._migrated[old] = new


def _int_or_none(value: str | int | None) -> int | None:
    if value is None:
        return None
    with contextlib.suppress(TypeError, ValueError):
        return int(value)
    return None


async def _retire(app: Application[Any, Any, Any, Any, Any, Any]) -> None:
    """Close a replaced client; its updates were already handed over."""
    try:
        if app.running:
            await app.stop()
    except Exception as error:
        log.debug("telegram: stopping the replaced client failed: %s", error)
    try:
        await app.shutdown()
    except Exception as error:
        log.debug("telegram: closing the replaced client failed: %s", error)


# Sends, edits and typing go out on one pool. A burst (many chats answered at once)
# opens a connection each, up to the library's 256; once it is over, this many stay open
# for the next calls and the rest are closed, so the sockets a gateway holds follow what
# it is doing now, not the busiest moment of its life.
IDLE_CONNECTIONS = 8
MAX_CONNECTIONS = 256


def _send_request() -> HTTPXRequest:
    import httpx

    limits = httpx.Limits(
        max_connections=MAX_CONNECTIONS, max_keepalive_connections=IDLE_CONNECTIONS
    )
    return HTTPXRequest(connection_pool_size=MAX_CONNECTIONS, httpx_kwargs={"limits": limits})


def _file_url(base_url: str) -> str:
    """`http://host/bot` → `http://host/file/bot` (how the Bot API lays out file URLs)."""
    root, _, _ = base_url.rpartition("/bot")
    return f"{root}/file/bot" if root else f"{base_url}/file"


def create_adapter(
    config: HeraldConfig | TelegramPlatformConfig,
    secrets: Secrets,
    *,
    poll_timeout: float | None = None,
    max_retry_after: float = 10.0,
    drain_timeout: float = 10.0,
    register_commands: bool = True,
    settings: Settings | None = None,
    home: HeraldHome | None = None,
) -> TelegramAdapter:
    """The Telegram adapter from `gateway.platforms.telegram` (the whole config or just
    that section). `settings` (offered by the gateway lifecycle) supplies the
    watchdog's slack; `home` is not needed here."""
    section = config.gateway.platforms.telegram if hasattr(config, "gateway") else config
    if not isinstance(section, TelegramPlatformConfig):
        raise TypeError(f"expected HeraldConfig or TelegramPlatformConfig, not {type(config)}")
    return TelegramAdapter(
        resolve_token(section.token, secrets),
        base_url=section.base_url,
        poll_timeout=poll_timeout if poll_timeout is not None else section.poll_timeout,
        max_retry_after=max_retry_after,
        drain_timeout=drain_timeout,
        register_commands=register_commands,
        silence_slack=settings.config.gateway.watchdog.slack_seconds if settings else 15.0,
        download_files=section.download_attachments,
    )


__all__ = [
    "TOKEN_SETTING",
    "TelegramAdapter",
    "TelegramConfigError",
    "TelegramConnectError",
    "create_adapter",
]
