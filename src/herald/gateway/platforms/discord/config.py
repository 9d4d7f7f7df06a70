"""The Discord adapter's secrets: the bot token from `gateway.platforms.discord.token`
(inline or, as recommended, `${DISCORD_BOT_TOKEN}` resolved from `.env`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from herald.config import Secrets

TOKEN_SETTING = "gateway.platforms.discord.token"


class DiscordConfigError(ValueError):
    """The Discord settings cannot work; the message names the setting to fix."""


def resolve_token(value: str | None, secrets: Secrets) -> str:
    from herald.gateway.secret_refs import resolve_secret_ref

    token = resolve_secret_ref(value, secrets, setting=TOKEN_SETTING)
    if token is None:
        raise DiscordConfigError(
            f"{TOKEN_SETTING} is not set: put `token: ${{DISCORD_BOT_TOKEN}}` under "
            "gateway.platforms.discord in config.yaml and DISCORD_BOT_TOKEN=… in .env "
            "(Developer Portal → your application → Bot → Reset Token)"
        )
    if token.count(".") != 2 or len(token) < 50:
        # Never echo the value: it may be a real secret pasted into the wrong place.
        raise DiscordConfigError(
            f"{TOKEN_SETTING} does not look like a Discord bot token (three dot-separated "
            "parts, as the Developer Portal's Bot page gives it; not the client secret)"
        )
    return token
