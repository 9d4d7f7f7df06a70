"""Discord under the adapter contract: discord.py against the fake Discord."""

from __future__ import annotations

from typing import Any

from harness import FileSeen, PlatformHarness, Sent, Where

from herald.testing.fake_discord import FakeDiscordServer, SentMessage

OWNER, MEMBER = 3_000_000_000_000_001, 3_000_000_000_000_002


class DiscordHarness(PlatformHarness):
    name = "discord"
    media = True
    owner = str(OWNER)
    member = str(MEMBER)

    def __init__(self) -> None:
        self.server = FakeDiscordServer(heartbeat_interval_ms=250)
        self.server.add_user("owner", OWNER)
        self.server.add_user("dana", MEMBER)
        guild = self.server.add_guild("home", OWNER)
        self.general = self.server.add_channel(guild, "general")
        self.thread_a = str(self.server.add_thread(self.general, "thread a", OWNER))
        self.thread_b = str(self.server.add_thread(self.general, "thread b", OWNER))
        self._last_message: int | None = None
        self.max_attachment_mb = 8.0

    def start(self) -> None:
        self.server.start()

    def stop(self) -> None:
        self.server.stop()

    def platform_config(self) -> dict[str, Any]:
        return {
            "enabled": True,
            "token": "${DISCORD_BOT_TOKEN}",
            "api_base": self.server.api_base,
            "gateway_url": self.server.gateway_url,
            "allowed_users": [self.owner, self.member],
            "max_attachment_mb": self.max_attachment_mb,
        }

    def env(self) -> dict[str, str]:
        return {"DISCORD_BOT_TOKEN": self.server.token}

    def max_length(self) -> int:
        return 2000

    def _channel(self, user: str, where: Where, thread: str | None) -> int:
        if where == "dm":
            return self.server.dm_channel(int(user))
        return int(thread) if thread else self.general

    def say(
        self,
        user: str,
        text: str,
        *,
        where: Where = "dm",
        thread: str | None = None,
        attachment: tuple[str, str, bytes] | None = None,
    ) -> str:
        files = [(attachment[0], attachment[2])] if attachment else []
        message_id = self.server.send_user_message(
            self._channel(user, where, thread),
            int(user),
            text,
            mention_bot=where != "dm",
            attachments=files,
        )
        self._last_message = message_id
        return str(message_id)

    def press(self, user: str, sent: Sent, data: str, *, where: Where = "dm") -> None:
        self.server.press_button(int(sent.ref), "herald:" + data, int(user))

    def replay_last_event(self) -> None:
        assert self._last_message is not None
        self.server.redeliver(self._last_message)

    async def replay_taken(self) -> None:
        await self.server.await_dispatches_seen(timeout=30)

    def fail_uploads(self, times: int) -> None:
        self.server.fail_next("POST", "/messages", status=503, times=times, uploads_only=True)

    def fail_sends(self, times: int) -> None:
        # 503: discord.py retries 500/502/504 itself, so this one reaches Herald.
        self.server.fail_next("POST", "/messages", status=503, times=times)

    def liveness_config(self) -> dict[str, Any]:
        # Later than the watchdog (a 0.25 s heartbeat + 1 s slack), as in production
        # (60 s against 41 s + 15 s): the watchdog is what this suite watches.
        return {"heartbeat_timeout": 5.0}

    def silence(self, on: bool) -> None:
        self.server.go_silent(on)

    def drop_connections_every(self, seconds: float | None) -> None:
        self.server.drop_every(seconds)

    def storm(self, on: bool) -> None:
        self.server.storm(503 if on else None)

    def files(self, *, where: Where = "dm", thread: str | None = None) -> list[FileSeen]:
        channel = self._channel(self.owner, where, thread)
        return [
            FileSeen(f.filename, f.data, m.content)
            for m in self.server.sent_messages(channel)
            for f in m.files
        ]

    def sent(self, *, where: Where = "dm", thread: str | None = None) -> list[Sent]:
        channel = self._channel(self.owner, where, thread)
        return [_sent(m, thread) for m in self.server.sent_messages(channel)]


def _sent(message: SentMessage, thread: str | None) -> Sent:
    return Sent(
        ref=str(message.message_id),
        text=message.content,
        buttons=tuple(b["custom_id"].removeprefix("herald:") for b in message.buttons()),
        reply_to=str(message.reply_to) if message.reply_to else None,
        thread=thread,
    )
