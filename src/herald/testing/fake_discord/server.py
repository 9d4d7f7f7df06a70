"""`FakeDiscordServer`: Discord's REST API and gateway on 127.0.0.1 for discord.py.

Tests build a world (`add_user`, `add_guild`, `add_channel`, `add_thread`), play the
users (`send_user_message`, `press_button`, `slash_command`, `redeliver`), read what
the bot did (`sent_messages`, `edits`, `typing`, `interaction_responses`) and break
things (`stop_acks`, `go_silent`, `drop_connections`, `drop_every`,
`refuse_next_resume`, `send_reconnect`, `fail_next`).
"""

from __future__ import annotations

import asyncio
import mimetypes
from types import TracebackType
from typing import Any

from aiohttp import web

from herald.testing.aio_server import AioServerThread
from herald.testing.fake_discord.gateway import OP_INVALID_SESSION, OP_RECONNECT, FakeGateway
from herald.testing.fake_discord.records import (
    ApiCall,
    EditRecord,
    Fault,
    GatewayCounters,
    InteractionResponse,
    SentMessage,
)
from herald.testing.fake_discord.rest import API, FakeRest
from herald.testing.fake_discord.world import DiscordWorld

DEFAULT_TOKEN = "MTEwMDAwMDAwMDAwMDAwMDAwMQ.FakeDc.discord-token-for-tests-0123456789"
INTERACTION_COMPONENT, INTERACTION_COMMAND = 3, 2


class FakeDiscordServer:
    def __init__(
        self,
        token: str = DEFAULT_TOKEN,
        *,
        bot_name: str = "herald",
        heartbeat_interval_ms: int = 41_250,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.world = DiscordWorld(token, bot_name)
        self.gateway = FakeGateway(self.world, heartbeat_interval_ms)
        self.rest = FakeRest(self.world, self.gateway, lambda: self.url)
        self._server = AioServerThread(self._make_app, host, port)
        self.attachment_size_limit = 10 * 1024 * 1024  # what a server without boosts allows

    def _make_app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.add_routes(
            [
                web.get("/gateway", self.gateway.handle),
                web.get("/gateway/", self.gateway.handle),
                *self.rest.routes(),
            ]
        )
        return app

    # ---- lifecycle ------------------------------------------------------------------------------

    def start(self) -> FakeDiscordServer:
        self._server.start()
        self.gateway.resume_url = self.gateway_url
        return self

    def stop(self) -> None:
        self._server.stop(before=self.gateway.close)

    def __enter__(self) -> FakeDiscordServer:
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
    def api_base(self) -> str:
        """What `discord.http.Route.BASE` would be: REST calls go under it."""
        return self.url + API

    @property
    def gateway_url(self) -> str:
        return f"ws://{self._server.host}:{self._server.port}/gateway"

    @property
    def token(self) -> str:
        return self.world.token

    @property
    def bot_id(self) -> int:
        return self.world.application_id

    # ---- the world ------------------------------------------------------------------------------

    def add_user(self, name: str, user_id: int | None = None) -> int:
        return self.world.add_user(name, user_id)

    def add_guild(self, name: str = "home", owner_id: int | None = None) -> int:
        owner = owner_id or self.add_user("guild-owner")
        return self.world.add_guild(name, owner)

    def add_channel(self, guild_id: int, name: str = "general") -> int:
        return self.world.add_channel(guild_id, name)

    def add_thread(
        self, parent_id: int, name: str = "a thread", owner_id: int | None = None
    ) -> int:
        return self.world.add_thread(parent_id, name, owner_id or self.bot_id)

    def dm_channel(self, user_id: int) -> int:
        return self.world.dm_channel_for(user_id)

    # ---- users acting ---------------------------------------------------------------------------

    def send_user_message(
        self,
        channel_id: int,
        user_id: int,
        content: str,
        *,
        mention_bot: bool = False,
        reply_to: int | None = None,
        attachments: list[tuple[str, bytes]] = (),  # type: ignore[assignment]
    ) -> int:
        """A user posts in a channel; the bot gets MESSAGE_CREATE. Returns the message id."""
        w = self.world
        with w.cond:
            if mention_bot:
                content = f"<@{self.bot_id}> {content}"
            files = []
            for name, data in attachments:
                attachment_id = w.next_id()
                path = f"{channel_id}/{attachment_id}/{name}"
                w.files[path] = data
                url = f"{self.url}/attachments/{path}"
                files.append(
                    {
                        "id": str(attachment_id),
                        "filename": name,
                        "content_type": mimetypes.guess_type(name)[0] or "application/octet-stream",
                        "size": len(data),
                        "url": url,
                        "proxy_url": url,
                    }
                )
            message = w.message_json(
                channel_id,
                user_id,
                content,
                mentions=[self.bot_id] if mention_bot else [],
                reply_to=reply_to,
                attachments=files,
            )
        self._dispatch("MESSAGE_CREATE", message)
        return int(message["id"])

    def redeliver(self, message_id: int) -> None:
        """Dispatch MESSAGE_CREATE again for a message already sent (a replay)."""
        self._dispatch("MESSAGE_CREATE", self.world.messages[message_id])

    def press_button(self, message_id: int, custom_id: str, user_id: int) -> int:
        message = self.world.messages[message_id]
        data = {"custom_id": custom_id, "component_type": 2}
        return self._interaction(
            int(message["channel_id"]), user_id, INTERACTION_COMPONENT, data, message=message
        )

    def slash_command(
        self, channel_id: int, user_id: int, name: str, options: dict[str, Any] | None = None
    ) -> int:
        data = {
            "id": str(next((c["id"] for c in self.world.commands if c["name"] == name), 1)),
            "name": name,
            "type": 1,
            "options": [{"name": k, "type": 3, "value": v} for k, v in (options or {}).items()],
        }
        return self._interaction(channel_id, user_id, INTERACTION_COMMAND, data)

    def _interaction(
        self,
        channel_id: int,
        user_id: int,
        kind: int,
        data: dict[str, Any],
        message: dict[str, Any] | None = None,
    ) -> int:
        w = self.world
        with w.cond:
            interaction_id = w.next_id()
            channel = w.channels[channel_id]
            body: dict[str, Any] = {
                "id": str(interaction_id),
                "application_id": str(w.application_id),
                "type": kind,
                "token": f"itoken-{interaction_id}",
                "version": 1,
                "channel_id": str(channel_id),
                "channel": channel,
                "data": data,
                "locale": "en-US",
                "app_permissions": "0",
                "entitlements": [],
                "attachment_size_limit": self.attachment_size_limit,
                "authorizing_integration_owners": {},
            }
            if channel.get("guild_id"):
                body["guild_id"] = channel["guild_id"]
                body["guild_locale"] = "en-US"
                body["member"] = w.member_json(int(channel["guild_id"]), user_id)
                body["context"] = 0
            else:
                body["user"] = w.users[user_id]
                body["context"] = 1
            if message is not None:
                body["message"] = message
            w.interactions[interaction_id] = body
        self._dispatch("INTERACTION_CREATE", body)
        return interaction_id

    def _dispatch(self, event: str, data: dict[str, Any]) -> None:
        asyncio.run_coroutine_threadsafe(
            self.gateway.dispatch_now(event, data), self._server.loop
        ).result(10)

    # ---- faults ---------------------------------------------------------------------------------

    def stop_acks(self) -> None:
        """Heartbeats are still read but never acknowledged (a zombied connection)."""
        self._server.call(lambda: setattr(self.gateway, "acks", False))

    def resume_acks(self) -> None:
        self._server.call(lambda: setattr(self.gateway, "acks", True))

    def go_silent(self, silent: bool = True) -> None:
        """The socket stays open and nothing at all comes down it (events are kept).
        Ending the silence cuts the hung connections, so the client resumes and gets
        what it missed."""
        self._server.call(lambda: setattr(self.gateway, "silent", silent))
        if not silent:
            self.drop_connections()

    def storm(self, status: int | None = 503) -> None:
        """Every REST call answers `status` until `storm(None)` (503: discord.py
        retries 500/502/504 itself, a 503 reaches the bot at once)."""
        with self.world.cond:
            self.world.storm = status

    def drop_connections(self, code: int | None = None) -> int:
        return asyncio.run_coroutine_threadsafe(
            self.gateway.drop_all(code), self._server.loop
        ).result(10)

    def drop_every(self, seconds: float | None) -> None:
        self._server.call(lambda: self.gateway.drop_every(seconds))

    def refuse_next_resume(self, times: int = 1) -> None:
        self._server.call(lambda: setattr(self.gateway, "refuse_resumes", times))

    def send_reconnect(self) -> None:
        self._server.submit(self.gateway.send_op(OP_RECONNECT))

    def invalidate_session(self, resumable: bool = False) -> None:
        self._server.submit(self.gateway.send_op(OP_INVALID_SESSION, resumable))

    def fail_next(
        self,
        method: str = "POST",
        path_contains: str = "",
        *,
        status: int = 500,
        times: int = 1,
        drop: bool = False,
        retry_after: float = 0.1,
        is_global: bool = False,
        uploads_only: bool = False,
    ) -> None:
        with self.world.cond:
            self.world.faults.append(
                Fault(
                    method.upper(),
                    path_contains,
                    status,
                    times,
                    drop,
                    retry_after,
                    is_global,
                    uploads_only,
                )
            )

    # ---- records --------------------------------------------------------------------------------

    def sent_messages(self, channel_id: int | None = None) -> list[SentMessage]:
        with self.world.cond:
            return [m for m in self.world.sent if channel_id in (None, m.channel_id)]

    @property
    def edits(self) -> list[EditRecord]:
        with self.world.cond:
            return list(self.world.edits)

    @property
    def typing(self) -> list[int]:
        with self.world.cond:
            return list(self.world.typing)

    @property
    def interaction_responses(self) -> list[InteractionResponse]:
        with self.world.cond:
            return list(self.world.interaction_responses)

    @property
    def commands(self) -> list[dict[str, Any]]:
        with self.world.cond:
            return list(self.world.commands)

    @property
    def calls(self) -> list[ApiCall]:
        with self.world.cond:
            return list(self.world.calls)

    @property
    def counters(self) -> GatewayCounters:
        return self.world.gateway

    # ---- waiting ----------------------------------------------------------------------------------

    def wait_for_messages(
        self, channel_id: int | None, n: int, timeout: float = 10.0
    ) -> list[SentMessage]:
        def probe() -> list[SentMessage] | None:
            found = self.sent_messages(channel_id)
            return found if len(found) >= n else None

        try:
            return self.world.wait_for(probe, timeout, f"for {n} messages")
        except TimeoutError as error:
            texts = [m.content[:80] for m in self.sent_messages(channel_id)]
            raise TimeoutError(f"{error}; sent so far: {texts}") from None

    def wait_until(self, predicate: Any, timeout: float = 10.0, what: str = "") -> Any:
        return self.world.wait_for(lambda: predicate() or None, timeout, what or "for a condition")

    async def await_messages(
        self, channel_id: int | None, n: int, timeout: float = 10.0
    ) -> list[SentMessage]:
        return await asyncio.to_thread(self.wait_for_messages, channel_id, n, timeout)

    async def await_until(self, predicate: Any, timeout: float = 10.0, what: str = "") -> Any:
        return await asyncio.to_thread(self.wait_until, predicate, timeout, what)

    async def await_dispatches_seen(self, timeout: float = 10.0) -> None:
        """Until the bot's heartbeat confirms it received every event dispatched so far."""
        # Read across threads without the loop: a few ints and a list's length, and the
        # heartbeat that moves them notifies the world's condition.
        await self.await_until(self.gateway.all_seen, timeout, "for the bot to see all events")
