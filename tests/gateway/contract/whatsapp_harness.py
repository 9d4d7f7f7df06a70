"""WhatsApp under the adapter contract: the adapter (its own webhook endpoint, httpx to
the Graph API) against the fake Cloud API, which signs and posts the webhooks.

The Cloud API has no group chats, so the contract's group tests skip. Buttons are
reply buttons (or a list, for more than three choices).
"""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

from harness import FileSeen, PlatformHarness, Sent, Where

from herald.testing.fake_whatsapp import (
    ACCESS_TOKEN,
    APP_SECRET,
    PHONE_NUMBER_ID,
    FakeWhatsAppServer,
    WaSent,
)
from herald.testing.listener import free_port

OWNER, MEMBER = "+15550000010", "+15550000020"
VERIFY_TOKEN = "verify-me-5f1c0b7e2a"
PATH = "/whatsapp/webhook"


class WhatsAppHarness(PlatformHarness):
    name = "whatsapp"
    media = True
    owner = OWNER
    member = MEMBER
    thread_a = thread_b = ""
    lacks: ClassVar[dict[str, str]] = {"groups": "the WhatsApp Cloud API answers people one to one"}
    supports_edits = False  # business messages cannot be edited

    def __init__(self) -> None:
        self.server = FakeWhatsAppServer()
        self.port = free_port()

    def start(self) -> None:
        self.server.start()
        self.server.webhook_url = f"http://127.0.0.1:{self.port}{PATH}"

    def stop(self) -> None:
        self.server.stop()

    def platform_config(self) -> dict[str, Any]:
        return {
            "enabled": True,
            "phone_number_id": PHONE_NUMBER_ID,
            "access_token": "${WHATSAPP_ACCESS_TOKEN}",
            "app_secret": "${WHATSAPP_APP_SECRET}",
            "verify_token": "${WHATSAPP_VERIFY_TOKEN}",
            "allowed_users": [OWNER, MEMBER],
            "api_url": self.server.url,
            "port": self.port,
            "path": PATH,
            "template_name": "herald_reply",
        }

    def env(self) -> dict[str, str]:
        return {
            "WHATSAPP_ACCESS_TOKEN": ACCESS_TOKEN,
            "WHATSAPP_APP_SECRET": APP_SECRET,
            "WHATSAPP_VERIFY_TOKEN": VERIFY_TOKEN,
        }

    def liveness_config(self) -> dict[str, Any]:
        return {"health_check_seconds": 0.3}

    def max_length(self) -> int:
        return 4096

    def say(
        self,
        user: str,
        text: str,
        *,
        where: Where = "dm",
        thread: str | None = None,
        attachment: tuple[str, str, bytes] | None = None,
    ) -> str:
        assert where == "dm", "WhatsApp has no group chats"
        return self.server.user_message(user, text, media=attachment)

    def press(self, user: str, sent: Sent, data: str, *, where: Where = "dm") -> None:
        prompt = next(s for s in self.server.sent if s.wamid == sent.ref)
        reply_id = sent.extra["ids"][sent.buttons.index(data)]
        self.server.press(user, prompt, reply_id)

    def replay_last_event(self) -> None:
        self.server.replay_last()

    async def replay_taken(self) -> None:
        for _ in range(600):
            if self.server.drained():
                return
            await asyncio.sleep(0.05)
        raise TimeoutError("whatsapp: the replayed delivery was never taken")

    def fail_sends(self, times: int) -> None:
        self.server.fail_sends(times)

    def fail_uploads(self, times: int) -> None:
        self.server.fail_uploads(times)

    def silence(self, on: bool) -> None:
        self.server.silence(on)

    def drop_connections_every(self, seconds: float | None) -> None:
        self.server.drop_connections_every(seconds)

    def storm(self, on: bool) -> None:
        self.server.storm(on)

    def sent(self, *, where: Where = "dm", thread: str | None = None) -> list[Sent]:
        return [_sent(s) for s in self.server.sent_to(OWNER) if s.media is None]

    def files(self, *, where: Where = "dm", thread: str | None = None) -> list[FileSeen]:
        return [
            FileSeen(s.media[0], s.media[1], s.text)
            for s in self.server.sent_to(OWNER)
            if s.media is not None
        ]


def _sent(message: WaSent) -> Sent:
    """As the person reads it. A button's data is the command its label stands for
    (what the adapter maps the pressed id back to); the ids ride along for `press`."""
    from herald.gateway.approvals import CHOICE_BUTTONS
    from herald.gateway.platforms.whatsapp.adapter import MAX_BUTTON_TITLE, MAX_ROW_TITLE

    by_title = {
        _cut(b.label, limit): b.data
        for b in CHOICE_BUTTONS.values()
        for limit in (MAX_BUTTON_TITLE, MAX_ROW_TITLE)
    }
    return Sent(
        ref=message.wamid,
        text=message.text,
        buttons=tuple(by_title.get(title, title) for _, title in message.buttons),
        reply_to=message.context,
        extra={"ids": tuple(i for i, _ in message.buttons), "template": message.template},
    )


def _cut(label: str, limit: int) -> str:
    title = " ".join(label.split())
    return title if len(title) <= limit else title[: limit - 1] + "…"
