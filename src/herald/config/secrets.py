"""The one accessor for secrets (DESIGN invariant 10).

Secrets come from the home's ``.env`` and from the process environment (the
environment wins, so a one-off ``OPENAI_API_KEY=… herald`` works). Nothing
else in Herald reads ``os.environ`` for a secret. The `.env` values are *not*
exported into ``os.environ``, so child processes never inherit them by accident.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from herald.config.shared_file import update_shared_file

# Names that mark an environment variable as secret even when it is not in .env.
SECRET_NAME_RE = re.compile(
    r"(?:^|_)(?:API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASS|CREDENTIALS?|AUTH)(?:_\d+)?$",
    re.IGNORECASE,
)


class MissingSecretError(LookupError):
    """A secret the configuration needs is not set anywhere."""


class Secrets:
    def __init__(self, env_file: Path | None = None, environ: Mapping[str, str] | None = None):
        self._env_file = env_file
        self._environ = dict(os.environ if environ is None else environ)
        self._file_values: dict[str, str] = {}
        if env_file is not None and env_file.exists():
            from dotenv import dotenv_values

            self._file_values = {
                k: v for k, v in dotenv_values(env_file).items() if v is not None and v != ""
            }

    @property
    def env_file(self) -> Path | None:
        return self._env_file

    def get(self, name: str) -> str | None:
        value = self._environ.get(name)
        if value:
            return value
        return self._file_values.get(name)

    def require(self, name: str, *, purpose: str = "") -> str:
        value = self.get(name)
        if not value:
            where = f" or in {self._env_file}" if self._env_file else ""
            why = f" ({purpose})" if purpose else ""
            raise MissingSecretError(
                f"secret {name} is not set{why}: set it in the environment{where}"
            )
        return value

    def numbered(self, name: str) -> list[str]:
        """`NAME`, `NAME_2` … `NAME_9` and the comma list `NAMES`, de-duplicated, in order
        (several keys per provider feed the credential pool)."""
        found: list[str] = []
        candidates = [self.get(name)]
        candidates += [self.get(f"{name}_{i}") for i in range(2, 10)]
        plural = self.get(f"{name}S")
        if plural:
            candidates += [part.strip() for part in plural.split(",")]
        for value in candidates:
            if value and value not in found:
                found.append(value)
        return found

    def secret_names(self) -> set[str]:
        names = set(self._file_values)
        names |= {k for k in self._environ if SECRET_NAME_RE.search(k)}
        return names

    def secret_values(self) -> list[str]:
        """Every known secret value (for redaction and for scrubbing child environments),
        longest first so a longer secret is masked before any prefix of it."""
        values = {self.get(name) for name in self.secret_names()}
        return sorted((v for v in values if v and len(v) >= 6), key=len, reverse=True)


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


ENV_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def env_file_names(path: Path) -> set[str]:
    """The names a `.env` file sets (without reading what it sets them to)."""
    if not path.exists():
        return set()
    names = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        name = line.split("=", 1)[0].strip().removeprefix("export ").strip()
        if "=" in line and name and not name.startswith("#"):
            names.add(name)
    return names


def write_env_value(path: Path, name: str, value: str) -> None:
    """Set NAME=value in a `.env` file, keeping every other line; written atomically and
    readable only by the owner (the file is created 0600, never briefly wider)."""
    if not ENV_NAME_RE.match(name):
        raise ValueError(f"{name!r} is not a valid environment variable name")
    if "\n" in value or "\r" in value:
        raise ValueError(f"the value for {name} must be one line")

    def put(text: str | None) -> tuple[str, None]:
        kept = [
            line
            for line in (text or "").splitlines()
            if line.split("=", 1)[0].strip().removeprefix("export ").strip() != name
        ]
        kept.append(f"{name}={value}")
        return "\n".join(kept) + "\n", None

    if path.exists():  # secrets stay owner-only, also in a .env created looser
        os.chmod(path, 0o600)
    # Under the shared-file lock with a compare-and-swap: a line another process adds
    # meanwhile is kept. A new file is created 0600, never briefly wider.
    update_shared_file(path, put, default_mode=0o600)
