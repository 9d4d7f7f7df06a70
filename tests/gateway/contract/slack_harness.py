"""Slack under the adapter contract: slack-bolt in Socket Mode against the fake Slack."""

from __future__ import annotations

from typing import Any

from harness import FileSeen, PlatformHarness, Sent, Where

from herald.testing.fake_slack import FakeSlackServer, PostedMessage


class SlackHarness(PlatformHarness):
    name = "slack"
    media = True

    def __init__(self) -> None:
        self.server = FakeSlackServer()
        self.owner = self.server.add_user("owner")
        self.member = self.server.add_user("dana")
        self.general = self.server.add_channel("general")
        # Two threads of #general, each under a message somebody posted earlier.
        self.thread_a = "1700000000.000101"
        self.thread_b = "1700000000.000202"
        self._last_event_id: str | None = None
        self.extra_env: dict[str, str] = {}

    def start(self) -> None:
        self.server.start()
        self.server.retry_unacked_after(3.0)  # Slack retries an event nobody acknowledged

    def stop(self) -> None:
        self.server.stop()

    def platform_config(self) -> dict[str, Any]:
        return {
            "enabled": True,
            "mode": "socket",
            "bot_token": "${SLACK_BOT_TOKEN}",
            "app_token": "${SLACK_APP_TOKEN}",
            "api_url": self.server.api_url,
            "allowed_users": [self.owner, self.member],
            "ping_interval": 0.5,
        }

    def env(self) -> dict[str, str]:
        return {
            "SLACK_BOT_TOKEN": self.server.bot_token,
            "SLACK_APP_TOKEN": self.server.app_token,
            **self.extra_env,
        }

    def max_length(self) -> int:
        return 4000

    def measure(self, text: str) -> int:
        from herald.gateway.platforms.slack.format import markdown_to_mrkdwn

        return len(markdown_to_mrkdwn(text))

    def _channel(self, user: str, where: Where) -> str:
        return self.server.dm_channel(user) if where == "dm" else self.general

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
        ts = self.server.send_user_message(
            self._channel(user, where),
            user,
            text,
            thread_ts=thread,
            mention_bot=where != "dm",
            files=files,
        )
        self._last_event_id = self.server.envelopes[-1].payload["event_id"]
        return ts

    def press(self, user: str, sent: Sent, data: str, *, where: Where = "dm") -> None:
        action_id = next(b["action_id"] for b in sent.extra["buttons"] if b["value"] == data)
        channel = self._channel(self.owner, where)
        self.server.press_button(channel, sent.ref, action_id, user, value=data)

    def replay_last_event(self) -> None:
        assert self._last_event_id is not None
        self.server.redeliver(self._last_event_id)

    async def replay_taken(self) -> None:
        await self.server.await_until(
            lambda: all(e.acked for e in self.server.envelopes), 30, "for every envelope's ack"
        )

    def fail_uploads(self, times: int) -> None:
        self.server.fail_next("files.completeUploadExternal", status=503, times=times)

    def fail_sends(self, times: int) -> None:
        self.server.fail_next("chat.postMessage", status=503, times=times)

    def liveness_config(self) -> dict[str, Any]:
        return {"ping_interval": 0.5}

    def silence(self, on: bool) -> None:
        self.server.go_silent(on)

    def drop_connections_every(self, seconds: float | None) -> None:
        self.server.drop_every(seconds)

    def storm(self, on: bool) -> None:
        self.server.storm(502 if on else None)

    def files(self, *, where: Where = "dm", thread: str | None = None) -> list[FileSeen]:
        channel = self._channel(self.owner, where)
        return [
            FileSeen(u.filename, u.data, u.initial_comment or "")
            for u in self.server.uploads
            if u.channel == channel and (thread is None or u.thread_ts == thread)
        ]

    def sent(self, *, where: Where = "dm", thread: str | None = None) -> list[Sent]:
        channel = self._channel(self.owner, where)
        return [
            _sent(m) for m in self.server.posted(channel) if thread is None or m.thread_ts == thread
        ]


def _sent(message: PostedMessage) -> Sent:
    buttons = message.buttons()
    payload = (message.metadata or {}).get("event_payload") or {}
    return Sent(
        ref=message.ts,
        text=message.text,
        buttons=tuple(b["value"] for b in buttons),
        reply_to=payload.get("reply_to"),
        thread=message.thread_ts,
        extra={"buttons": buttons},
    )
