"""The Telegram adapter's settings: the bot token, from `gateway.platforms.telegram.token`
(inline or, as recommended, a `${TELEGRAM_BOT_TOKEN}` reference into `.env`)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from herald.config import Secrets

TOKEN_SETTING = "gateway.platforms.telegram.token"
_TOKEN_SHAPE = re.compile(r"^\d+:[A-Za-z0-9_-]{20,}$")


class TelegramConfigError(ValueError):
    """The Telegram settings cannot work; the message names the setting to fix."""


def resolve_token(value: str | None, secrets: Secrets) -> str:
    """The bot token from `gateway.platforms.telegram.token`, with `${VAR}` resolved
    (an unset variable raises `MissingSecretError` naming the setting and the variable)."""
    from herald.gateway.secret_refs import resolve_secret_ref

    token = resolve_secret_ref(value, secrets, setting=TOKEN_SETTING)
    if token is None:
        raise TelegramConfigError(
            f"{TOKEN_SETTING} is not set: put `token: ${{TELEGRAM_BOT_TOKEN}}` under "
            "gateway.platforms.telegram in config.yaml and TELEGRAM_BOT_TOKEN=… in .env"
        )
    if not _TOKEN_SHAPE.match(token):
        # Never echo the value: it may be a real secret pasted into the wrong place.
        raise TelegramConfigError(
            f"{TOKEN_SETTING} does not look like a bot token (expected 123456789:AAE…, "
            "as @BotFather gives it)"
        )
    return token
