"""Config section `gateway.platforms.matrix`: the Matrix entrance (mautrix), a bot
account on a homeserver, with end-to-end encryption by default."""

from __future__ import annotations

from pydantic import Field

from herald.config.strict import StrictModel


class MatrixPlatformConfig(StrictModel):
    enabled: bool = False
    homeserver: str | None = Field(
        None, description="the homeserver's client API URL, e.g. https://matrix.example.org"
    )
    user_id: str | None = Field(None, description="Herald's account, e.g. @herald:example.org")
    access_token: str | None = Field(
        None, description="the bot account's access token, e.g. ${MATRIX_ACCESS_TOKEN}"
    )
    password: str | None = Field(
        None,
        description="instead of a token: the account's password, e.g. ${MATRIX_PASSWORD} "
        "(Herald logs in once and keeps the device it gets)",
    )
    device_name: str = Field("Herald", description="the device name other members see")
    allowed_users: list[str] = Field(
        default_factory=list, description="Matrix user ids (@you:example.org), or *"
    )
    require_mention: bool = Field(
        True,
        description="in rooms, answer only messages that mention Herald (or reply to it, "
        "or continue a thread it answered); DMs are always answered",
    )
    auto_join: bool = Field(
        True, description="accept room invitations from allowed users (others are ignored)"
    )
    shared_group_sessions: bool = Field(
        False, description="one session per room thread instead of one per member"
    )
    encryption: bool = Field(
        True,
        description="end-to-end encryption (mautrix's Olm machine, its store under the home); "
        "off: Herald never posts in an encrypted room",
    )
    notify_unencrypted_failure: bool = Field(
        False,
        description="when a reply cannot be encrypted, post a short unencrypted notice saying "
        "so in that room (it names no content); off: the failure is only logged",
    )
    download_attachments: bool = Field(
        True, description="save allowed users' files into the gateway workdir's attachments/"
    )
    max_attachment_mb: float = Field(
        8.0, gt=0, description="files larger than this are noted, not downloaded"
    )
    sync_timeout_seconds: float = Field(
        30.0, gt=0, le=120, description="how long one /sync long poll waits for events"
    )
    edit_interval_seconds: float = Field(
        1.5,
        ge=0,
        description="streaming: at most one edit (m.replace) per message this often; "
        "edits in between are folded into the next",
    )
    store_dir: str | None = Field(
        None, description="where the sync token and crypto store live (default <home>/matrix)"
    )


__all__ = ["MatrixPlatformConfig"]
