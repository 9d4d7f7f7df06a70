"""The environment a command's process starts with: Herald's own minus every
secret, plus what the caller asked for by name (DESIGN invariant 10)."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from herald.config import Secrets
from herald.environments.tool_marker import TOOL_CALL_MARKER

# Commands run without a human at the keyboard: never wait in a pager or for a
# git credential prompt. Callers may override these through `env`.
NON_INTERACTIVE_DEFAULTS: dict[str, str] = {
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "GIT_TERMINAL_PROMPT": "0",
}

_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def check_env_names(env: Mapping[str, str] | None) -> dict[str, str]:
    """`env` as a plain dict, refusing names a shell could not export."""
    out: dict[str, str] = {}
    for name, value in (env or {}).items():
        if not _NAME_RE.match(name):
            raise ValueError(f"invalid environment variable name {name!r}")
        out[name] = str(value)
    return out


def scrub_secrets(base: Mapping[str, str], secrets: Secrets | None) -> dict[str, str]:
    """`base` without secret names (the accessor's, and any name that looks like a
    secret) and without any variable whose value is a known secret value."""
    # A Secrets over `base` itself applies the accessor's secret-name pattern to it.
    doomed = Secrets(None, environ=base).secret_names()
    values: set[str] = set()
    if secrets is not None:
        doomed |= secrets.secret_names()
        values = set(secrets.secret_values())
    return {k: v for k, v in base.items() if k not in doomed and v not in values}


def build_child_env(
    secrets: Secrets | None,
    extra: Mapping[str, str] | None = None,
    *,
    base: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The full environment for a local child process. It always carries the
    tool-call marker, set last so no caller's `extra` removes it (see
    :mod:`herald.environments.tool_marker`)."""
    child = scrub_secrets(os.environ if base is None else base, secrets)
    child.update(NON_INTERACTIVE_DEFAULTS)
    child.update(check_env_names(extra))
    child[TOOL_CALL_MARKER] = "1"
    return child
