"""Email as an entrance: IMAP IDLE in, SMTP out, one thread one session.

See `adapter` for what it reads, marks and remembers, and `mail` for the rules that
decide which mail becomes a turn. The gateway builds it with `create_adapter` from
``gateway.platforms.email``.
"""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import TYPE_CHECKING

from herald.config.schema_email import EmailPlatformConfig

if TYPE_CHECKING:
    from herald.config import HeraldHome, Secrets, Settings
    from herald.gateway.platforms.email.adapter import EmailAdapter

SETTING = "gateway.platforms.email"


class EmailConfigError(ValueError):
    """The email settings cannot work; the message names the setting to fix."""


def _loopback(host: str | None) -> bool:
    if host in ("localhost",):
        return True
    try:
        return ipaddress.ip_address(host or "").is_loopback
    except ValueError:
        return False


def check_config(section: EmailPlatformConfig) -> None:
    missing = [
        k for k in ("address", "imap_host", "smtp_host", "password") if not getattr(section, k)
    ]
    if missing:
        raise EmailConfigError(
            f"{SETTING}: set {', '.join(missing)} (see the README's email section)"
        )
    for key, host in (("imap", section.imap_host), ("smtp", section.smtp_host)):
        if getattr(section, f"{key}_security") == "none" and not _loopback(host):
            raise EmailConfigError(
                f"{SETTING}.{key}_security is none but {key}_host {host} is not on this machine:"
                " the password and every mail would cross the network in clear text; use tls"
                + (" or starttls" if key == "smtp" else "")
            )
    if not section.allowed_users:
        raise EmailConfigError(
            f"{SETTING}.allowed_users is empty: nobody's mail would be answered; list the"
            " senders (addresses, or @domain) whose mail Herald may act on"
        )


def create_adapter(
    config: EmailPlatformConfig,
    secrets: Secrets,
    *,
    home: HeraldHome,
    settings: Settings | None = None,
) -> EmailAdapter:
    from herald.gateway.platforms.email.adapter import EmailAdapter
    from herald.gateway.secret_refs import resolve_secret_ref

    check_config(config)
    password = resolve_secret_ref(config.password, secrets, setting=f"{SETTING}.password")
    if not password:
        raise EmailConfigError(f"{SETTING}.password is empty")
    return EmailAdapter(
        config,
        password,
        state_path=home.root / "gateway" / "email.json",
        # where the other chat entrances put what people send: the working directory's
        # attachments/ folder, whose files are untrusted when read
        attachments_dir=_workdir(settings) / "attachments",
    )


def _workdir(settings: Settings | None) -> Path:
    cwd = settings.config.gateway.cwd if settings is not None else None
    return Path(cwd or Path.cwd())


__all__ = ["EmailConfigError", "check_config", "create_adapter"]
