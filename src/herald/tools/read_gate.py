"""The safety gate for file-tool reads: `read_file` of ``~/.herald/.env`` must be as
refused as ``cat ~/.herald/.env`` in the terminal (control.secret_read), or the file
tools would be a way around the command guard. `search_files` hides matches inside
Herald's secret files instead of refusing a whole search of, say, the home directory.

A symbolic link is judged by where it points too (on the local backend, where that can
be known): a link planted in the workdir must not turn a secret into an ordinary file.
"""

from __future__ import annotations

import fnmatch
import os
import posixpath

from herald.environments import Environment
from herald.safety import secret_read_refusal
from herald.tools.registry import ToolContext
from herald.tools.terminal_approval import CommandRefused, check_env


def real_paths(path: str, environment: Environment) -> list[str]:
    """`path` and, on the local backend, what it resolves to through symbolic links."""
    paths = [path]
    if environment.name == "local":
        real = os.path.realpath(path)
        if real != path:
            paths.append(real)
    return paths


def secret_refusal(path: str, ctx: ToolContext, environment: Environment) -> str | None:
    env = check_env(ctx, environment, environment.cwd)
    for candidate in real_paths(path, environment):
        refusal = secret_read_refusal(candidate, env)
        if refusal is not None:
            return refusal
    return None


def gate_read(path: str, ctx: ToolContext, environment: Environment) -> None:
    """Refuse (CommandRefused) a tool reading one of Herald's secrets."""
    refusal = secret_refusal(path, ctx, environment)
    if refusal is not None:
        raise CommandRefused(refusal)


# Where Herald itself saves what came from outside, under the working directory: files
# people sent through a chat entrance (Discord, Slack, email) and pages' downloads.
# Their contents are untrusted whatever `trust.untrusted_paths` says.
INBOUND_FOLDERS = ("attachments", "downloads")


def untrusted_file_source(path: str, ctx: ToolContext, environment: Environment) -> str | None:
    """``file:<path>`` when `path` (or where it links to) is under one of the working
    directory's `INBOUND_FOLDERS` or matches one of ``trust.untrusted_paths``: a glob on
    the absolute path (``~`` is the environment's home; ``*`` also crosses ``/``), or a
    plain directory, which covers what is under it."""
    patterns = list(ctx.config.trust.untrusted_paths if ctx.config is not None else [])
    if environment.cwd:
        patterns += [posixpath.join(environment.cwd, folder) for folder in INBOUND_FOLDERS]
    home = environment.resolve("~").rstrip("/")
    for pattern in patterns:
        pattern = home + pattern[1:] if pattern.startswith("~") else pattern
        plain = not any(c in pattern for c in "*?[")
        for candidate in real_paths(path, environment):
            if fnmatch.fnmatchcase(candidate, pattern) or (
                plain and candidate.startswith(pattern.rstrip("/") + "/")
            ):
                return f"file:{path}"
    return None


__all__ = ["INBOUND_FOLDERS", "gate_read", "real_paths", "secret_refusal", "untrusted_file_source"]
