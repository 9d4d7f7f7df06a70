"""`FakeSlackServer`: Slack's Web API and Socket Mode on 127.0.0.1 for slack_sdk/slack-bolt.

Point `AsyncWebClient(base_url=server.api_url)` at it; Socket Mode finds the websocket
through `apps.connections.open` as with Slack. Tests play the people
(`send_user_message`, `press_button`, `slash_command`, `redeliver`), read what the app
did (`posted`, `updates`, `uploads`, `envelopes`) and break things (`stop_pongs`,
`go_silent`, `drop_connections`, `drop_every`, `send_disconnect`, `fail_next`,
`retry_unacked_after`); `deliver_over_http(url)` switches to signed HTTP events.
"""

from __future__ import annotations

import asyncio
from types import TracebackType
from typing import Any

from aiohttp import web

from herald.testing.aio_server import AioServerThread
from herald.testing.fake_slack.delivery import FakeDelivery
from herald.testing.fake_slack.records import (
    ApiCall,
    Envelope,
    Fault,
    PostedMessage,
    SocketCounters,
    UpdateRecord,
    UploadRecord,
)
from herald.testing.fake_slack.webapi import FakeWebApi
from herald.testing.fake_slack.world import SlackWorld

DEFAULT_BOT_TOKEN = "xoxb-000000000001-000000000002-FakeSlackBotTokenForTests"
DEFAULT_APP_TOKEN = "xapp-1-A0FAKE001-000000000003-fakeslackapptokenfortests0123456789"
DEFAULT_SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"


class FakeSlackServer:
    def __init__(
        self,
        bot_token: str = DEFAULT_BOT_TOKEN,
        app_token: str = DEFAULT_APP_TOKEN,
        signing_secret: str = DEFAULT_SIGNING_SECRET,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.world = SlackWorld(bot_token, app_token, signing_secret)
        self.web = FakeWebApi(self.world, lambda: self.url)
        self.web.socket_url = lambda: f"ws://{self._server.host}:{self._server.port}/link/"
        self.delivery = FakeDelivery(self.world)
        self._server = AioServerThread(self._make_app, host, port)

    def _make_app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.add_routes([web.get("/link/", self.delivery.handle), *self.web.routes()])
        return app

    # ---- lifecycle ------------------------------------------------------------------------------

    def start(self) -> FakeSlackServer:
        self._server.start()
        return self

    def stop(self) -> None:
        self._server.stop(before=self.delivery.close)

    def __enter__(self) -> FakeSlackServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def url(self) -> str:
        return f"http://{self._server.host}:{self._server.port}"

    @property
    def api_url(self) -> str:
        """For `AsyncWebClient(base_url=...)` (the SDK wants the trailing slash)."""
        return self.url + "/api/"

    @property
    def bot_token(self) -> str:
        return self.world.bot_token

    @property
    def app_token(self) -> str:
        return self.world.app_token

    @property
    def signing_secret(self) -> str:
        return self.world.signing_secret

    @property
    def bot_user_id(self) -> str:
        return self.world.bot_user_id

    # ---- the workspace --------------------------------------------------------------------------

    def add_user(self, name: str) -> str:
        return self.world.add_user(name)

    def add_channel(self, name: str = "general", *, private: bool = False) -> str:
        return self.world.add_channel(name, private=private)

    def dm_channel(self, user_id: str) -> str:
        return self.world.dm_channel(user_id)

    # ---- people acting --------------------------------------------------------------------------

    def send_user_message(
        self,
        channel_id: str,
        user_id: str,
        text: str,
        *,
        thread_ts: str | None = None,
        mention_bot: bool = False,
        files: list[tuple[str, bytes]] = (),  # type: ignore[assignment]
        channel_messages: bool = True,
    ) -> str:
        """Someone posts; the app gets `message` (DMs, and channels when subscribed to
        `message.channels`) and, when the bot is mentioned in a channel, `app_mention`
        as a separate event with its own event_id, as Slack sends both. Returns the ts."""
        w = self.world
        with w.cond:
            if mention_bot:
                text = f"<@{w.bot_user_id}> {text}"
            shared = []
            for name, data in files:
                file_id = w.next_id("F")
                file_json = self.web.file_json(file_id, name, data)
                w.files[file_id] = {"data": data, "json": file_json}
                shared.append(file_json)
            message = w.user_message(channel_id, user_id, text, thread_ts=thread_ts, files=shared)
            in_dm = w.channels[channel_id]["_type"] == "im"
            events = []
            if in_dm or channel_messages:
                events.append(dict(message))
            if mention_bot and not in_dm:
                events.append(dict(message, type="app_mention"))
        for event in events:
            self._deliver("events_api", w.event_callback(event))
        return str(message["ts"])

    def redeliver(self, event_id: str) -> None:
        """Send an event again with its event_id (as Slack's retries do)."""
        with self.world.cond:
            first = next(e for e in self.world.envelopes if e.payload.get("event_id") == event_id)
            attempt = 1 + sum(
                1 for e in self.world.envelopes if e.payload.get("event_id") == event_id
            )
        self._deliver(first.type, first.payload, retry_attempt=attempt - 1)

    def press_button(
        self, channel_id: str, message_ts: str, action_id: str, user_id: str, value: str = ""
    ) -> None:
        with self.world.cond:
            message = self.world.messages[(channel_id, message_ts)]
            block_id = next(
                (
                    b.get("block_id", "")
                    for b in message.get("blocks", [])
                    for e in b.get("elements", [])
                    if e.get("action_id") == action_id
                ),
                "",
            )
            action = {"action_id": action_id, "block_id": block_id, "value": value}
            payload = self.world.block_actions(channel_id, message_ts, user_id, action)
        self._deliver("interactive", payload)

    def slash_command(self, channel_id: str, user_id: str, command: str, text: str = "") -> None:
        self._deliver(
            "slash_commands", self.world.slash_command(channel_id, user_id, command, text)
        )

    def _deliver(self, kind: str, payload: dict[str, Any], retry_attempt: int = 0) -> None:
        envelope = Envelope(self.world.next_id("env-"), kind, payload, retry_attempt)
        asyncio.run_coroutine_threadsafe(self.delivery.deliver(envelope), self._server.loop).result(
            10
        )

    # ---- faults ---------------------------------------------------------------------------------

    def stop_pongs(self, stopped: bool = True) -> None:
        """Pings from the client are read and never answered (a stale connection)."""
        self._server.call(lambda: setattr(self.delivery, "pongs", not stopped))

    def go_silent(self, silent: bool = True) -> None:
        """Nothing comes down the socket (no pongs, no envelopes); envelopes are kept."""
        self._server.call(lambda: setattr(self.delivery, "silent", silent))
        if not silent:
            self._server.submit(self.delivery.flush())

    def storm(self, status: int | None = 502) -> None:
        """Every Web API call answers `status` until `storm(None)`."""
        with self.world.cond:
            self.world.storm = status

    def drop_connections(self) -> int:
        return asyncio.run_coroutine_threadsafe(self.delivery.drop_all(), self._server.loop).result(
            10
        )

    def drop_every(self, seconds: float | None) -> None:
        self._server.call(lambda: self.delivery.drop_every(seconds))

    def send_disconnect(self, reason: str = "refresh_requested") -> None:
        self._server.submit(self.delivery.send_disconnect(reason))

    def retry_unacked_after(self, seconds: float | None) -> None:
        self._server.call(lambda: setattr(self.delivery, "retry_unacked_after", seconds))

    def deliver_over_http(self, request_url: str | None) -> None:
        self._server.call(lambda: setattr(self.delivery, "http_target", request_url))

    def fail_next(
        self,
        method: str,
        *,
        error: str = "internal_error",
        status: int = 200,
        times: int = 1,
        drop: bool = False,
        retry_after: int = 1,
    ) -> None:
        with self.world.cond:
            self.world.faults.append(Fault(method, error, status, times, drop, retry_after))

    # ---- records --------------------------------------------------------------------------------

    def posted(self, channel_id: str | None = None) -> list[PostedMessage]:
        with self.world.cond:
            return [m for m in self.world.posted if channel_id in (None, m.channel)]

    @property
    def updates(self) -> list[UpdateRecord]:
        with self.world.cond:
            return list(self.world.updates)

    @property
    def uploads(self) -> list[UploadRecord]:
        with self.world.cond:
            return list(self.world.uploads)

    @property
    def envelopes(self) -> list[Envelope]:
        with self.world.cond:
            return list(self.world.envelopes)

    @property
    def calls(self) -> list[ApiCall]:
        with self.world.cond:
            return list(self.world.calls)

    @property
    def counters(self) -> SocketCounters:
        return self.world.counters

    # ---- waiting ----------------------------------------------------------------------------------

    def wait_for_posts(
        self, channel_id: str | None, n: int, timeout: float = 10.0
    ) -> list[PostedMessage]:
        def probe() -> list[PostedMessage] | None:
            found = self.posted(channel_id)
            return found if len(found) >= n else None

        try:
            return self.world.wait_for(probe, timeout, f"for {n} posts")
        except TimeoutError as error:
            texts = [m.text[:80] for m in self.posted(channel_id)]
            raise TimeoutError(f"{error}; posted so far: {texts}") from None

    def wait_until(self, predicate: Any, timeout: float = 10.0, what: str = "") -> Any:
        return self.world.wait_for(lambda: predicate() or None, timeout, what or "for a condition")

    async def await_posts(
        self, channel_id: str | None, n: int, timeout: float = 10.0
    ) -> list[PostedMessage]:
        return await asyncio.to_thread(self.wait_for_posts, channel_id, n, timeout)

    async def await_until(self, predicate: Any, timeout: float = 10.0, what: str = "") -> Any:
        return await asyncio.to_thread(self.wait_until, predicate, timeout, what)
