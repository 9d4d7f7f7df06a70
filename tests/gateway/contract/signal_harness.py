"""Signal under the adapter contract: the adapter against the fake signal-cli daemon.

Signal has no threads inside a group; two groups stand for the contract's two threads
(each conversation its own session). Buttons are reactions on the prompt.
"""

from __future__ import annotations

import asyncio
from typing import Any

from harness import FileSeen, PlatformHarness, Sent, Where

from herald.gateway.platforms.signal.adapter import _EMOJI_FOR
from herald.testing.fake_signal import FakeSignalServer, SignalSent

ACCOUNT = "+15550000001"
OWNER, MEMBER = "+15550000010", "+15550000020"
GROUP = "R3JvdXAtb25lLWlkLWZvci10ZXN0cw=="
KEEPALIVE = 0.3


class SignalHarness(PlatformHarness):
    name = "signal"
    media = True
    owner = OWNER
    member = MEMBER
    thread_a = "+R3JvdXAtQQ=="  # a group id that starts like a phone number
    thread_b = "R3JvdXAtQg=="

    def __init__(self) -> None:
        self.server = FakeSignalServer(ACCOUNT, keepalive=KEEPALIVE)

    def start(self) -> None:
        self.server.start()

    def stop(self) -> None:
        self.server.stop()

    def platform_config(self) -> dict[str, Any]:
        return {
            "enabled": True,
            "account": ACCOUNT,
            "url": self.server.url,
            "allowed_users": [OWNER, MEMBER],
            "keepalive_seconds": KEEPALIVE,
        }

    def max_length(self) -> int:
        return 2000

    def _group(self, where: Where, thread: str | None) -> str | None:
        return None if where == "dm" else (thread or GROUP)

    def say(
        self,
        user: str,
        text: str,
        *,
        where: Where = "dm",
        thread: str | None = None,
        attachment: tuple[str, str, bytes] | None = None,
    ) -> str:
        attachments = []
        if attachment is not None:  # as a Signal app sends it: audio is a voice note (AAC)
            name, mime, content = attachment
            voice = mime.startswith("audio/")
            mime = "audio/aac" if voice else mime
            attachments = [self.server.attach(name, mime, content, voice=voice)]
        group = self._group(where, thread)
        ts = self.server.user_message(
            user, text, group_id=group, attachments=attachments, mentions_bot=group is not None
        )
        return f"{user}:{ts}"

    def press(self, user: str, sent: Sent, data: str, *, where: Where = "dm") -> None:
        target = next(s for s in self.server.sent if f"{ACCOUNT}:{s.timestamp}" == sent.ref)
        self.server.react(user, _EMOJI_FOR[data], target)

    def replay_last_event(self) -> None:
        self.server.replay_last()

    async def replay_taken(self) -> None:
        for _ in range(600):
            if self.server.drained():
                return
            await asyncio.sleep(0.05)
        raise TimeoutError("signal: the replayed message was never taken from the stream")

    def fail_uploads(self, times: int) -> None:
        self.server.fail_uploads(times)

    def fail_sends(self, times: int) -> None:
        self.server.fail_sends(times)

    def silence(self, on: bool) -> None:
        self.server.silence(on)

    def drop_connections_every(self, seconds: float | None) -> None:
        self.server.drop_connections_every(seconds)

    def storm(self, on: bool) -> None:
        self.server.storm(on)

    def files(self, *, where: Where = "dm", thread: str | None = None) -> list[FileSeen]:
        chat = OWNER if where == "dm" else (thread or GROUP)
        return [
            FileSeen(name, data, s.text)
            for s in self.server.sent_to(chat)
            for name, data in s.files
        ]

    def sent(self, *, where: Where = "dm", thread: str | None = None) -> list[Sent]:
        chat = OWNER if where == "dm" else (thread or GROUP)
        return [_sent(s) for s in self.server.sent_to(chat)]


_DATA_FOR = {emoji: data for data, emoji in _EMOJI_FOR.items()}


def _sent(message: SignalSent) -> Sent:
    text = message.text
    buttons: tuple[str, ...] = ()
    if "\n\nReact to this message: " in text:
        text, _, choices = text.rpartition("\n\nReact to this message: ")
        buttons = tuple(_DATA_FOR[c.split()[0]] for c in choices.split(" · "))
        text = message.text  # the prompt as a user reads it, choices included
    reply_to = None
    if message.quote_timestamp is not None:
        reply_to = f"{message.quote_author}:{message.quote_timestamp}"
    return Sent(
        ref=f"{ACCOUNT}:{message.timestamp}",
        text=text,
        buttons=buttons,
        reply_to=reply_to,
        thread=message.group_id,
    )
