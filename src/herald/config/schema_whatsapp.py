"""`gateway.platforms.whatsapp`: the WhatsApp Cloud API (Meta's Graph API out, signed
webhooks in)."""

from __future__ import annotations

import re

from pydantic import Field, field_validator

from herald.config.strict import StrictModel

_NOT_DIGITS = re.compile(r"[\s().-]+")


def phone_number(value: str) -> str:
    """``+`` and the digits of an international number (WhatsApp's wa_id with a plus):
    "+1 (555) 123-4567", "15551234567" and "+15551234567" are one person."""
    digits = _NOT_DIGITS.sub("", str(value).strip()).removeprefix("+")
    if not digits.isdigit() or not 6 <= len(digits) <= 15:
        raise ValueError(
            f"{value!r} is not a phone number: write it in international form with the "
            "country code, e.g. +15551234567"
        )
    return "+" + digits


class WhatsAppPlatformConfig(StrictModel):
    enabled: bool = False
    phone_number_id: str | None = Field(
        None, description="the Phone number ID under WhatsApp → API Setup (not the number)"
    )
    access_token: str | None = Field(
        None, description="a System User access token, e.g. ${WHATSAPP_ACCESS_TOKEN}"
    )
    app_secret: str | None = Field(
        None, description="the Meta app's App Secret (signs webhooks), e.g. ${WHATSAPP_APP_SECRET}"
    )
    verify_token: str | None = Field(
        None,
        description="the token you type into Meta's webhook setup, e.g. ${WHATSAPP_VERIFY_TOKEN}",
    )
    allowed_users: list[str] = Field(
        default_factory=list, description="phone numbers with country code, e.g. +15551234567"
    )
    api_url: str = Field("https://graph.facebook.com", description="Graph API base URL")
    api_version: str = Field("v21.0", description="Graph API version in the path")
    host: str = Field("127.0.0.1", description="where the webhook endpoint listens")
    port: int = Field(8646, ge=0, le=65535, description="0 = any free port")
    path: str = Field("/whatsapp/webhook", description="the webhook's path (Callback URL)")
    template_name: str | None = Field(
        None,
        description="an approved message template sent when the 24 h service window is closed",
    )
    template_language: str = Field("en_US", description="the template's language code")
    template_text_parameter: bool = Field(
        True, description="fill the template's {{1}} with the start of the reply"
    )
    service_window_hours: float = Field(
        24.0, gt=0, description="how long after a person's last message free text may be sent"
    )
    max_attachment_mb: float = Field(
        16.0, gt=0, description="media larger than this are noted, not downloaded"
    )
    health_check_seconds: float = Field(
        60.0, gt=0, description="how often the Graph API is asked whether the number works"
    )

    @field_validator("allowed_users")
    @classmethod
    def _numbers(cls, value: list[str]) -> list[str]:
        return [v if v == "*" else phone_number(v) for v in value]

    @field_validator("path")
    @classmethod
    def _path(cls, value: str) -> str:
        if not value.startswith("/"):
            raise ValueError(f"path must start with '/', e.g. /whatsapp/webhook (got {value!r})")
        return value


__all__ = ["WhatsAppPlatformConfig", "phone_number"]
