"""The Matrix adapter's login: the homeserver, the account, and an access token or a
password, the secrets inline or (as recommended) `${VAR}` references from `.env`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from herald.config import Secrets
    from herald.config.schema_matrix import MatrixPlatformConfig

SECTION = "gateway.platforms.matrix"


class MatrixConfigError(ValueError):
    """The Matrix settings cannot work; the message names the setting to fix."""


@dataclass(frozen=True)
class MatrixSecrets:
    homeserver: str
    user_id: str
    access_token: str | None = field(default=None, repr=False)
    password: str | None = field(default=None, repr=False)


def resolve_secrets(section: MatrixPlatformConfig, secrets: Secrets) -> MatrixSecrets:
    from herald.gateway.secret_refs import resolve_secret_ref

    if not section.homeserver or not section.homeserver.startswith(("https://", "http://")):
        raise MatrixConfigError(
            f"{SECTION}.homeserver must be the homeserver's URL, e.g. https://matrix.example.org"
        )
    user = section.user_id or ""
    if not (user.startswith("@") and ":" in user):
        raise MatrixConfigError(
            f"{SECTION}.user_id must be Herald's full Matrix id, e.g. @herald:example.org"
        )
    if not section.allowed_users:
        raise MatrixConfigError(
            f"{SECTION}.allowed_users is empty: list the Matrix ids (@you:example.org) of the "
            "people Herald may answer"
        )
    token = resolve_secret_ref(section.access_token, secrets, setting=f"{SECTION}.access_token")
    password = resolve_secret_ref(section.password, secrets, setting=f"{SECTION}.password")
    if not token and not password:
        raise MatrixConfigError(
            f"{SECTION} needs a login: put `access_token: ${{MATRIX_ACCESS_TOKEN}}` (or "
            f"`password: ${{MATRIX_PASSWORD}}`) under {SECTION} in config.yaml and the value "
            "in .env (see the README's Matrix section for getting a token)"
        )
    return MatrixSecrets(section.homeserver.rstrip("/"), user, token or None, password or None)


__all__ = ["MatrixConfigError", "MatrixSecrets", "resolve_secrets"]
