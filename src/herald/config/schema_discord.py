"""Config section `gateway.platforms.discord`: the Discord entrance (discord.py)."""

from __future__ import annotations

from pydantic import Field

from herald.config.strict import StrictModel


class DiscordPlatformConfig(StrictModel):
    enabled: bool = False
    token: str | None = Field(None, description="bot token, e.g. ${DISCORD_BOT_TOKEN}")
    allowed_users: list[str] = Field(
        default_factory=list, description="Discord user ids (numbers) or @usernames"
    )
    require_mention: bool = Field(
        True,
        description="in guild channels, answer only messages that mention the bot or reply "
        "to it (DMs are always answered)",
    )
    shared_group_sessions: bool = Field(
        False, description="one session per channel instead of one per member"
    )
    slash_commands: bool = Field(
        True, description="register /stop, /new, /usage and /agents with Discord"
    )
    download_attachments: bool = Field(
        True, description="save allowed users' attachments into the gateway workdir"
    )
    max_attachment_mb: float = Field(
        8.0, gt=0, description="attachments larger than this are noted, not downloaded"
    )
    api_base: str | None = Field(
        None, description="REST base URL instead of Discord's (tests, a REST proxy)"
    )
    gateway_url: str | None = Field(
        None, description="gateway websocket URL instead of Discord's (tests)"
    )
    heartbeat_timeout: float = Field(
        60.0, gt=0, description="seconds without a heartbeat ack before the library reconnects"
    )


__all__ = ["DiscordPlatformConfig"]
