"""`gateway.platforms.email`: Herald's mailbox (IMAP in, SMTP out)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from herald.config.strict import StrictModel


class EmailPlatformConfig(StrictModel):
    enabled: bool = False
    address: str | None = Field(
        None, description="Herald's own address; mail to it (or its +tags) becomes turns"
    )
    aliases: list[str] = Field(
        default_factory=list, description="other addresses that reach Herald in the same box"
    )
    allowed_users: list[str] = Field(
        default_factory=list,
        description="senders whose mail becomes turns: addresses, or @domain for a whole domain",
    )
    sender_auth: Literal["required", "off"] = Field(
        "required",
        description="require the receiving server's Authentication-Results (DMARC, or DKIM/SPF"
        " aligned with the From domain) before a sender counts as who they say they are",
    )
    auth_server: str | None = Field(
        None, description="the authserv-id of your provider's Authentication-Results header"
    )
    username: str | None = Field(None, description="IMAP/SMTP login; default: address")
    password: str | None = Field(None, description="e.g. ${HERALD_EMAIL_PASSWORD}")
    imap_host: str | None = None
    imap_port: int = Field(993, ge=1, le=65535)
    imap_security: Literal["tls", "none"] = Field(
        "tls", description="none is for a server on loopback only"
    )
    folder: str = Field("INBOX", description="the one folder Herald reads")
    idle: bool = Field(True, description="IMAP IDLE; false polls every poll_seconds")
    poll_seconds: float = Field(60.0, gt=0)
    idle_seconds: float = Field(
        300.0,
        ge=1,  # each renewal is a round trip to the server: a second at the least
        le=29 * 60,  # RFC 2177: servers may drop an IDLE client after 30 minutes
        description="IDLE is renewed this often; each renewal is a sign that the link lives",
    )
    silence_slack_seconds: float = Field(
        90.0,
        gt=0,
        description="how long past idle_seconds (or poll_seconds) a silent link is given"
        " before the watchdog calls it down and restarts it",
    )
    smtp_host: str | None = None
    smtp_port: int = Field(587, ge=1, le=65535)
    smtp_security: Literal["starttls", "tls", "none"] = Field(
        "starttls", description="none is for a server on loopback only"
    )
    max_attachment_mb: float = Field(10.0, gt=0, description="larger attachments are left out")
    quote: bool = Field(False, description="quote the message answered in replies")
