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
