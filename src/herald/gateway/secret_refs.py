"""`${VAR}` references in gateway config fields (bot tokens, API keys, webhook
secrets), resolved through the one secrets accessor (DESIGN invariant 10)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from herald.config import MissingSecretError

if TYPE_CHECKING:
    from herald.config import Secrets

SECRET_REF_RE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def resolve_secret_ref(
    value: str | None, secrets: Secrets, *, setting: str | None = None
) -> str | None:
    """`value` with every ``${VAR}`` replaced by the secret's value; a literal value
    comes back unchanged, None or blank gives None. A reference to a secret that is
    not set raises `MissingSecretError` naming the variable (and `setting`, the config
    key, when given) and where to set it."""
    if value is None or not value.strip():
        return None

    def substitute(match: re.Match[str]) -> str:
        name = match.group(1)
        found = secrets.get(name)
        if not found:
            where = f" or in {secrets.env_file}" if secrets.env_file else ""
            key = f"{setting} refers to " if setting else ""
            raise MissingSecretError(
                f"{key}${{{name}}}, which is not set: set {name} in the environment{where}"
            )
        return found

    resolved = SECRET_REF_RE.sub(substitute, value).strip()
    return resolved or None


__all__ = ["SECRET_REF_RE", "resolve_secret_ref"]
