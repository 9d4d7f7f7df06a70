"""Telegram under the adapter contract: python-telegram-bot against the fake Bot API."""

from __future__ import annotations

from typing import Any

from harness import FileSeen, PlatformHarness, Sent, Where

from herald.testing.fake_telegram import FakeTelegramServer, SentMessage, utf16_length

OWNER, MEMBER = 1001, 1002
FORUM = -1002000000001  # a supergroup with topics: threads are forum topics


class TelegramHarness(PlatformHarness):
    name = "telegram"
    media = True
    owner = str(OWNER)
    member = str(MEMBER)
    thread_a = "7"
    thread_b = "8"

    def __init__(self) -> None:
        self.server = FakeTelegramServer()

    def start(self) -> None:
        self.server.start()

    def stop(self) -> None:
        self.server.stop()

    def platform_config(self) -> dict[str, Any]:
        return {
            "enabled": True,
            "token": "${TELEGRAM_BOT_TOKEN}",
            "base_url": self.server.base_url,
            "allowed_users": [self.owner, self.member],
            "poll_timeout": 1,
        }

    def env(self) -> dict[str, str]:
        return {"TELEGRAM_BOT_TOKEN": self.server.token}

    def max_length(self) -> int:
        return 4096

    def measure(self, text: str) -> int:
        return utf16_length(text)

    def _chat(self, user: str, where: Where) -> int:
        return int(user) if where == "dm" else FORUM

    def say(
        self,
        user: str,
        text: str,
        *,
        where: Where = "dm",
        thread: str | None = None,
        attachment: tuple[str, str, bytes] | None = None,
    ) -> str:
        media: dict[str, Any] = {}
        if attachment is not None:  # as a Telegram client sends it: a photo, a voice note
            name, mime, content = attachment
            if mime.startswith("image/"):
                media = {"photo_data": content}
            elif mime == "audio/ogg":
                media = {"voice": content}
            else:
                media = {"document": (name, mime, len(content)), "document_data": content}
        message_id = self.server.send_user_message(
            self._chat(user, where),
            int(user),
            text,
            "private" if where == "dm" else "supergroup",
            int(thread) if thread else None,
            username=f"user{user}",
            **media,
        )
        return str(message_id)

    def press(self, user: str, sent: Sent, data: str, *, where: Where = "dm") -> None:
        self.server.press_button(self._chat(user, where), int(user), int(sent.ref), data)

    def replay_last_event(self) -> None:
        self.server.replay_update()

    async def replay_taken(self) -> None:
        await self.server.await_replays_taken()

    def fail_uploads(self, times: int) -> None:
        self.server.fail_next("sendDocument", 502, "Bad Gateway", times=times)

    def fail_sends(self, times: int) -> None:
        self.server.fail_next("sendMessage", 502, "Bad Gateway", times=times)

    def liveness_config(self) -> dict[str, Any]:
        return {"poll_timeout": 1}

    def silence(self, on: bool) -> None:
        self.server.silence_polls(on)

    def drop_connections_every(self, seconds: float | None) -> None:
        self.server.drop_connections_every(seconds)

    def storm(self, on: bool) -> None:
        if on:
            self.server.error_storm(502, "Bad Gateway")
        else:
            self.server.end_storm()

    def files(self, *, where: Where = "dm", thread: str | None = None) -> list[FileSeen]:
        chat = OWNER if where == "dm" else FORUM
        return [
            FileSeen(upload.filename, upload.data, m.text)
            for m in self.server.sent_messages(chat)
            for upload in (m.document, m.voice)
            if upload is not None and (thread is None or str(m.message_thread_id) == thread)
        ]

    def sent(self, *, where: Where = "dm", thread: str | None = None) -> list[Sent]:
        chat = OWNER if where == "dm" else FORUM
        return [
            _sent(m)
            for m in self.server.sent_messages(chat)
            if thread is None or str(m.message_thread_id) == thread
        ]


def _sent(message: SentMessage) -> Sent:
    return Sent(
        ref=str(message.message_id),
        text=message.text,
        buttons=tuple(b.callback_data or "" for row in message.buttons for b in row),
        reply_to=str(message.reply_to_message_id) if message.reply_to_message_id else None,
        thread=str(message.message_thread_id) if message.message_thread_id else None,
        extra={"raw_text": message.raw_text},
    )
