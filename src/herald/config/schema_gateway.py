"""Config section `gateway`: the long-running process and its platforms.

Secrets (bot tokens, API keys, webhook secrets) may be written inline or as a
`${VAR}` reference resolved through the secrets accessor (`.env`), which is the
recommended form.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from herald.config.strict import StrictModel


class ApiPlatformConfig(StrictModel):
    enabled: bool = False
    host: str = "127.0.0.1"
    port: int = Field(8642, ge=0, le=65535, description="0 = any free port")
    api_key: str | None = Field(None, description="bearer token, e.g. ${HERALD_API_KEY}")
    model_name: str = Field("herald", description="the model id clients see in /v1/models")


class TelegramPlatformConfig(StrictModel):
    enabled: bool = False
    token: str | None = Field(None, description="bot token, e.g. ${TELEGRAM_BOT_TOKEN}")
    allowed_users: list[str] = Field(default_factory=list, description="user ids or @names")
    base_url: str | None = Field(None, description="Bot API base URL (tests, local servers)")
    shared_group_sessions: bool = Field(
        False, description="one session per group instead of one per member"
    )


class WebhookPlatformConfig(StrictModel):
    enabled: bool = False
    secret: str | None = Field(None, description="HMAC key, e.g. ${HERALD_WEBHOOK_SECRET}")
    profile: str | None = Field(None, description="profile that handles webhooks")
    host: str = "127.0.0.1"
    port: int = Field(8643, ge=0, le=65535)
    deliver_to: str | None = Field(
        None, description="where replies go, e.g. 'telegram:12345'; unset = in the response"
    )


class PlatformsConfig(StrictModel):
    api: ApiPlatformConfig = Field(default_factory=ApiPlatformConfig)
    telegram: TelegramPlatformConfig = Field(default_factory=TelegramPlatformConfig)
    webhook: WebhookPlatformConfig = Field(default_factory=WebhookPlatformConfig)


class ProfileRoute(StrictModel):
    platform: str
    guild: str | None = None
    chat: str | None = None
    thread: str | None = None
    profile: str


class GatewayConfig(StrictModel):
    platforms: PlatformsConfig = Field(default_factory=PlatformsConfig)
    profile_routes: list[ProfileRoute] = Field(default_factory=list)
    busy_mode: Literal["interrupt", "steer", "queue"] = "interrupt"
