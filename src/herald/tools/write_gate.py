"""The safety gate for file-tool writes: writing ~/.ssh/authorized_keys with `write_file`
must need the same approval as `cat > ~/.ssh/authorized_keys` in the terminal, or the
file tools would be a way around the command guard.

With nobody there (an unattended turn) a write is judged by the path rules alone, not by
the unattended command allowlist (`cat > path` is never read-only, yet a cron job must
be able to write its report into its workdir). One more path rule holds unattended: git
metadata (``.git/…``, ``.gitattributes``, ``.gitmodules``, ``.gitconfig``, a bare
repository's ``HEAD``) is not written, because the read-only git commands an unattended
turn may run (``git status``, ``git diff``) execute what that metadata names
(``core.fsmonitor``, ``diff.external``, textconv filters)."""

from __future__ import annotations

import posixpath
import shlex

from herald.environments import Environment
from herald.tools.read_gate import real_paths
from herald.tools.registry import ToolContext
from herald.tools.terminal_approval import CommandRefused, gate_command

_GIT_FILES = frozenset({".gitattributes", ".gitmodules", ".gitconfig", "HEAD"})


def git_metadata(path: str) -> bool:
    """True for a path git reads its configuration, attributes or repository from."""
    parts = [p for p in posixpath.normpath(path).split("/") if p]
    if ".git" in parts or (parts and parts[-1] in _GIT_FILES):
        return True
    return "/".join(parts[-3:-1]) == ".config/git"  # ~/.config/git/config, attributes


def gate_write(tool: str, path: str, ctx: ToolContext, environment: Environment) -> str:
    """Allow a write of `path` (absolute) or raise CommandRefused; returns a note for the
    model, usually empty."""
    # A symbolic link is judged by where it points as well: a link to config.yaml
    # planted in the workdir is still config.yaml, and hooks -> .git/hooks still lands
    # in the hooks the host runs.
    paths = real_paths(path, environment)
    if ctx.approve is None and any(git_metadata(p) for p in paths):
        raise CommandRefused(
            f"Not written: {path} is git metadata, which decides what git commands run; an "
            f"unattended turn ({ctx.surface}) may not change it. Do not retry; write "
            "somewhere else or report what you would need."
        )
    equivalent = "; ".join(f"cat > {shlex.quote(p)}" for p in paths)
    return gate_command(
        equivalent,
        ctx,
        environment,
        environment.cwd,
        display=f"{tool} {path}",
        allowlist=False,
    )
