"""The safety gate for file-tool writes: writing ~/.ssh/authorized_keys with `write_file`
must need the same approval as `cat > ~/.ssh/authorized_keys` in the terminal, or the
file tools would be a way around the command guard."""

from __future__ import annotations

import os
import shlex

from herald.environments import Environment
from herald.tools.registry import ToolContext
from herald.tools.terminal_approval import gate_command


def gate_write(tool: str, path: str, ctx: ToolContext, environment: Environment) -> str:
    """Allow a write of `path` (absolute) or raise CommandRefused; returns a note for the
    model, usually empty."""
    targets = [path]
    if environment.name == "local":
        # A symlink in the project (hooks -> .git/hooks) must not hide where the
        # bytes land: the rules see the real path as well.
        real = os.path.realpath(path)
        if real != path:
            targets.append(real)
    if len(targets) == 1:
        equivalent = f"cat > {shlex.quote(path)}"
    else:
        equivalent = "tee " + " ".join(shlex.quote(t) for t in targets) + " >/dev/null"
    return gate_command(equivalent, ctx, environment, environment.cwd, display=f"{tool} {path}")
