"""Config section `gateway.platforms.slack`: the Slack entrance (slack-bolt), over
Socket Mode (an app-level token, no public URL) or HTTP events (a signing secret)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from herald.config.strict import StrictModel


class SlackPlatformConfig(StrictModel):
    enabled: bool = False
    mode: Literal["socket", "http"] = Field(
        "socket", description="socket: Socket Mode (app token); http: Events API request URL"
    )
    bot_token: str | None = Field(None, description="xoxb- token, e.g. ${SLACK_BOT_TOKEN}")
    app_token: str | None = Field(
        None,
        description="xapp- token with connections:write (socket mode), e.g. ${SLACK_APP_TOKEN}",
    )
    signing_secret: str | None = Field(
        None, description="signing secret (http mode), e.g. ${SLACK_SIGNING_SECRET}"
    )
    allowed_users: list[str] = Field(
        default_factory=list, description="Slack member ids (U0123…) or @usernames"
    )
    require_mention: bool = Field(
        True,
        description="in channels, answer only messages that mention the bot (app_mention) "
        "or continue a thread it is in; DMs are always answered",
    )
    shared_group_sessions: bool = Field(
        False, description="one session per channel thread instead of one per member"
    )
    download_attachments: bool = Field(
        True, description="save allowed users' files into the gateway workdir"
    )
    max_attachment_mb: float = Field(
        8.0, gt=0, description="files larger than this are noted, not downloaded"
    )
    host: str = Field("127.0.0.1", description="http mode: where the events endpoint listens")
    port: int = Field(8645, ge=0, le=65535, description="http mode: 0 = any free port")
    path: str = Field("/slack/events", description="http mode: the Request URL's path")
    api_url: str | None = Field(
        None, description="Web API base URL instead of Slack's (tests), ending in /api/"
    )
    ping_interval: float = Field(
        10.0, gt=0, description="socket mode: seconds between websocket pings"
    )


__all__ = ["SlackPlatformConfig"]
