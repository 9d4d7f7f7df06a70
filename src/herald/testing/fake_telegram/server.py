"""`FakeTelegramServer`: a Bot API server on 127.0.0.1 for python-telegram-bot to talk to.

Tests play the users (`send_user_message`, `press_button`), read what the bot did
(`sent_messages`, `edits`, `chat_actions`, `callback_answers`) and inject failures
(`fail_chat`, `fail_next`, `flood`), including the liveness fault modes: polls that
stay open but silent (`silence_polls`), connections cut every few seconds
(`drop_connections_every`), a 5xx storm (`error_storm`) and updates delivered again
(`replay_update`).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
from types import TracebackType
from typing import Any

from herald.testing.fake_telegram.http_handler import FakeTelegramRequestHandler
from herald.testing.fake_telegram.methods import BotApi
from herald.testing.fake_telegram.records import (
    CHAT_FAILURES,
    ApiCall,
    CallbackAnswer,
    ChatActionRecord,
    ChatInfo,
    EditRecord,
    Fault,
    SentMessage,
)
from herald.testing.fake_telegram.state import FakeTelegramState
from herald.testing.stoppable_server import StoppableHTTPServer

DEFAULT_TOKEN = "123456789:AAFakeTelegramTokenForTests0123456789"
_GRACE_SECONDS = 0.5


class FakeTelegramHTTPServer(StoppableHTTPServer["FakeTelegramServer"]):
    def __init__(self, address: tuple[str, int], owner: FakeTelegramServer) -> None:
        super().__init__(address, FakeTelegramRequestHandler, owner)


class FakeTelegramServer:
    """A real HTTP server on loopback speaking the Telegram Bot API subset Herald uses."""

    def __init__(
        self,
        token: str = DEFAULT_TOKEN,
        *,
        bot_username: str = "herald_test_bot",
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.host = host
        self._requested_port = port
        bot_id = int(token.split(":", 1)[0]) if token.split(":", 1)[0].isdigit() else 1
        self.state = FakeTelegramState(token, bot_username, bot_id)
        self.api = BotApi(self.state)
        self._httpd: FakeTelegramHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._dropper_epoch = 0
        self.drops = 0  # connection cuts made by drop_connections_every

    # ---- lifecycle ----------------------------------------------------------------------------

    def start(self) -> FakeTelegramServer:
        if self._httpd is not None:
            raise RuntimeError("FakeTelegramServer is already running")
        with self.state.cond:
            self.state.stopping = False
        httpd = FakeTelegramHTTPServer((self.host, self._requested_port), self)
        self._requested_port = int(httpd.server_address[1])  # a restart keeps the same port
        self._httpd = httpd
        self._thread = httpd.serve_in_thread(f"fake-telegram:{self.port_of(httpd)}")
        return self

    def stop(self) -> None:
        httpd, thread = self._httpd, self._thread
        if httpd is None or thread is None:
            return
        with self.state.cond:
            self._dropper_epoch += 1  # the dropper thread ends
            self.state.stopping = True  # long polls return at once
            self.state.notify()
        httpd.stop_serving(thread, _GRACE_SECONDS)
        self._httpd = self._thread = None

    def __enter__(self) -> FakeTelegramServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @staticmethod
    def port_of(httpd: FakeTelegramHTTPServer) -> int:
        return int(httpd.server_address[1])

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("FakeTelegramServer is not running; call start() first")
        return self.port_of(self._httpd)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def base_url(self) -> str:
        """For `ApplicationBuilder().base_url(...)`: the library appends the token."""
        return f"{self.url}/bot"

    @property
    def base_file_url(self) -> str:
        return f"{self.url}/file/bot"

    @property
    def token(self) -> str:
        return self.state.token

    @property
    def open_connections(self) -> int:
        """The bot's HTTP connections open now: its polls, and those its pool keeps idle."""
        return self._httpd.open_connections if self._httpd is not None else 0

    @property
    def bot_username(self) -> str:
        return str(self.state.bot["username"])

    # ---- playing the users --------------------------------------------------------------------

    def send_user_message(
        self,
        chat_id: int,
        user_id: int,
        text: str,
        chat_type: str = "private",
        thread_id: int | None = None,
        username: str | None = None,
        *,
        first_name: str | None = None,
        title: str | None = None,
        reply_to: int | None = None,
        photo: tuple[int, int] | None = None,
        document: tuple[str, str, int] | None = None,
        photo_data: bytes | None = None,
        voice: bytes | None = None,
        document_data: bytes | None = None,
    ) -> int:
        """Queue an update as if `user_id` wrote `text` in `chat_id`; returns its message id.

        ``chat_type`` is private (chat id = user id), group or supergroup; a ``thread_id``
        makes the supergroup a forum and the message a topic message. ``photo`` is
        (width, height); ``document`` is (file name, MIME type, size); with either, the
        text becomes the caption. ``photo_data``, ``voice`` (an OGG voice note) and
        ``document_data`` are the files' bytes, which the bot can then fetch with getFile
        and a download from `base_file_url` (`file_downloads` lists what it fetched).
        """
        return self.state.user_message(
            chat_id,
            user_id,
            text,
            chat_type=chat_type,
            thread_id=thread_id,
            username=username,
            first_name=first_name,
            title=title,
            reply_to=reply_to,
            photo=photo,
            document=document,
            photo_data=photo_data,
            voice=voice,
            document_data=document_data,
        )

    def edit_user_message(self, chat_id: int, message_id: int, text: str) -> int:
        """Queue an `edited_message` update; returns its update id."""
        return self.state.edited_user_message(chat_id, message_id, text)

    def press_button(self, chat_id: int, user_id: int, message_id: int, data: str) -> str:
        """Queue a callback query as if `user_id` pressed the button carrying `data` on the
        bot's message; the button must be on that message now. Returns the query id."""
        return self.state.callback_press(chat_id, user_id, message_id, data)

    def add_chat(
        self, chat_id: int, chat_type: str = "private", *, title: str | None = None
    ) -> None:
        """Make a chat known without a message in it (the bot may only write known chats)."""
        with self.state.cond:
            if chat_type == "private":
                self.state.ensure_user(chat_id, None, None)
            self.state.ensure_chat(chat_id, chat_type, title, None)

    # ---- failure injection --------------------------------------------------------------------

    def fail_chat(self, chat_id: int, kind: str | None = "blocked") -> None:
        """Every call writing to `chat_id` fails from now on: blocked, kicked, deactivated or
        not_found (None restores the chat)."""
        if kind is not None and kind not in CHAT_FAILURES:
            raise ValueError(f"kind must be one of {sorted(CHAT_FAILURES)}")
        with self.state.cond:
            chat = self.state.chats.get(chat_id)
            if chat is None:
                chat = self.state.chats[chat_id] = ChatInfo(chat_id, "private")
            chat.failure = kind

    def fail_next(
        self,
        method: str,
        error_code: int = 500,
        description: str = "Internal Server Error",
        *,
        retry_after: int | None = None,
        chat_id: int | None = None,
        times: int = 1,
        drop: bool = False,
        migrate_to_chat_id: int | None = None,
    ) -> None:
        """The next `times` calls of `method` (for `chat_id`, if given) fail this way;
        ``drop=True`` cuts the connection instead of answering."""
        with self.state.cond:
            self.state.faults.append(
                Fault(
                    method,
                    error_code,
                    description,
                    retry_after,
                    chat_id,
                    times,
                    drop,
                    migrate_to_chat_id,
                )
            )

    def migrate_chat(self, chat_id: int, new_chat_id: int) -> None:
        """The group `chat_id` became supergroup `new_chat_id`: writes to the old id answer
        400 with ``parameters.migrate_to_chat_id`` from now on."""
        with self.state.cond:
            old = self.state.chats.get(chat_id)
            if old is None or old.type != "group":
                raise ValueError(f"chat {chat_id} is not a known group")
            self.state.ensure_chat(new_chat_id, "supergroup", old.title, None)
            old.migrated_to = new_chat_id

    def flood(self, method: str = "sendMessage", retry_after: int = 1, **kw: Any) -> None:
        """A 429 flood-control answer with `parameters.retry_after` for the next call(s)."""
        self.fail_next(
            method,
            429,
            f"Too Many Requests: retry after {retry_after}",
            retry_after=retry_after,
            **kw,
        )

    # ---- fault modes (liveness) -----------------------------------------------------------------

    def silence_polls(self, silent: bool = True) -> None:
        """While on, every new getUpdates is taken and never answered (a link that stays
        open but carries nothing); turning it off cuts those polls unanswered."""
        with self.state.cond:
            if self.state.silent_polls and not silent:
                self.state.silence_epoch += 1
            self.state.silent_polls = silent
            self.state.notify()

    def answer_after(self, seconds: float) -> None:
        """Every call but getUpdates takes `seconds` to answer (a slow link), so calls
        made together are in flight together; 0 turns it off."""
        with self.state.cond:
            self.state.latency = seconds

    def error_storm(
        self,
        status: int = 502,
        description: str = "Bad Gateway",
        methods: tuple[str, ...] | None = None,
    ) -> None:
        """Every call (or every call of `methods`) answers `status` until `end_storm`."""
        with self.state.cond:
            self.state.storm = (status, description, frozenset(methods) if methods else None)

    def end_storm(self) -> None:
        with self.state.cond:
            self.state.storm = None
            self.state.notify()

    @property
    def storm_hits(self) -> int:
        with self.state.cond:
            return self.state.storm_hits

    def drop_polls(self) -> int:
        """Cut the connections of the long polls waiting now (a proxy resetting idle
        connections); sends are left alone, so a cut never leaves a message half-sent.
        Returns how many were cut."""
        with self.state.cond:
            polling = list(self.state.polling)
        for connection in polling:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
        return len(polling)

    def drop_connections_every(self, seconds: float | None) -> None:
        """`drop_polls` every `seconds` from now on (None: stop doing it)."""
        with self.state.cond:
            self._dropper_epoch += 1
            epoch = self._dropper_epoch
        if seconds is None:
            return

        def run() -> None:
            while True:
                with self.state.cond:
                    self.state.cond.wait_for(
                        lambda: self._dropper_epoch != epoch or self.state.stopping, seconds
                    )
                    if self._dropper_epoch != epoch or self.state.stopping:
                        return
                self.drops += self.drop_polls()

        threading.Thread(target=run, name="fake-telegram:dropper", daemon=True).start()

    def replay_update(self, update_id: int | None = None) -> int:
        """Deliver an update again, as it was (same update_id), whatever offset the bot
        confirmed: what a bot sees when Telegram re-sends after a lost confirmation.
        Default: the newest update. Returns its id."""
        with self.state.cond:
            if not self.state.history:
                raise ValueError("no update has been sent yet")
            chosen = max(self.state.history) if update_id is None else update_id
            update = self.state.history.get(chosen)
            if update is None:
                raise ValueError(f"no update {chosen}")
            self.state.replays.append(dict(update))
            self.state.notify()
            return chosen

    async def await_replays_taken(self, timeout: float = 10.0) -> None:
        await self.await_until(lambda: not self.state.replays, timeout, "for the replay to go out")

    # ---- what the bot did -----------------------------------------------------------------------

    def sent_messages(self, chat_id: int | None = None) -> list[SentMessage]:
        with self.state.cond:
            return [m for m in self.state.sent if chat_id is None or m.chat_id == chat_id]

    @property
    def file_downloads(self) -> list[str]:
        with self.state.cond:
            return list(self.state.file_downloads)

    @property
    def edits(self) -> list[EditRecord]:
        with self.state.cond:
            return list(self.state.edits)

    @property
    def chat_actions(self) -> list[ChatActionRecord]:
        with self.state.cond:
            return list(self.state.chat_actions)

    @property
    def callback_answers(self) -> list[CallbackAnswer]:
        with self.state.cond:
            return list(self.state.callback_answers)

    @property
    def calls(self) -> list[ApiCall]:
        with self.state.cond:
            return list(self.state.calls)

    @property
    def commands(self) -> list[dict[str, Any]]:
        with self.state.cond:
            return list(self.state.commands)

    @property
    def polls_started(self) -> int:
        """getUpdates calls received so far (answered or still waiting)."""
        with self.state.cond:
            return self.state.poll_generation

    @property
    def pending_updates(self) -> int:
        """Updates not yet confirmed by a later getUpdates offset."""
        with self.state.cond:
            return len(self.state.updates)

    def record(self, call: ApiCall) -> None:
        with self.state.cond:
            self.state.calls.append(call)
            self.state.notify()

    # ---- waiting (blocking; the `a`-prefixed twins are for asyncio tests) ----------------------

    def wait_for_messages(
        self, chat_id: int | None, n: int, timeout: float = 10.0
    ) -> list[SentMessage]:
        """Block until the bot has sent at least `n` messages to `chat_id`; returns them all."""

        def probe() -> list[SentMessage] | None:
            found = self.sent_messages(chat_id)
            return found if len(found) >= n else None

        where = "in total" if chat_id is None else f"to chat {chat_id}"
        try:
            return self.state.wait_for(probe, timeout, f"for {n} messages {where}")
        except TimeoutError as error:
            texts = [m.text[:80] for m in self.sent_messages(chat_id)]
            raise TimeoutError(f"{error}; sent so far: {texts}") from None

    def wait_until(self, predicate: Any, timeout: float = 10.0, what: str = "") -> Any:
        """Block until `predicate()` is truthy (re-checked on every server event)."""
        return self.state.wait_for(lambda: predicate() or None, timeout, what or "for a condition")

    def wait_for_updates_consumed(self, timeout: float = 10.0) -> None:
        """Block until every queued update was fetched and confirmed by the bot."""
        self.wait_until(lambda: not self.state.updates, timeout, "for the bot to take all updates")

    async def await_updates_consumed(self, timeout: float = 10.0) -> None:
        await asyncio.to_thread(self.wait_for_updates_consumed, timeout)

    async def await_messages(
        self, chat_id: int | None, n: int, timeout: float = 10.0
    ) -> list[SentMessage]:
        return await asyncio.to_thread(self.wait_for_messages, chat_id, n, timeout)

    async def await_until(self, predicate: Any, timeout: float = 10.0, what: str = "") -> Any:
        return await asyncio.to_thread(self.wait_until, predicate, timeout, what)
