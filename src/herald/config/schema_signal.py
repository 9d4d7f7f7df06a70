"""`gateway.platforms.signal`: a linked signal-cli daemon (JSON-RPC over HTTP)."""

from __future__ import annotations

from pydantic import Field

from herald.config.strict import StrictModel


class SignalPlatformConfig(StrictModel):
    enabled: bool = False
    account: str | None = Field(None, description="Herald's Signal number, e.g. +15550001111")
    url: str = Field(
        "http://127.0.0.1:8080", description="where `signal-cli daemon --http` listens"
    )
    allowed_users: list[str] = Field(
        default_factory=list, description="numbers (+15551234567) or Signal UUIDs"
    )
    mention_in_groups: bool = Field(
        True, description="in groups, answer only messages that mention Herald or quote it"
    )
    attachments_dir: str | None = Field(
        None,
        description="no longer read: attachments come through signal-cli's getAttachment",
    )
    keepalive_seconds: float = Field(
        15.0, gt=0, description="signal-cli's keep-alive interval on the event stream"
    )
