"""The safety gate for file-tool writes: writing ~/.ssh/authorized_keys with `write_file`
must need the same approval as `cat > ~/.ssh/authorized_keys` in the terminal, or the
file tools would be a way around the command guard."""

from __future__ import annotations

import shlex

from herald.environments import Environment
from herald.safety import classify_path
from herald.tools.read_gate import real_paths
from herald.tools.registry import ToolContext
from herald.tools.terminal_approval import check_env, gate_command


def gate_write(tool: str, path: str, ctx: ToolContext, environment: Environment) -> str:
    """Allow a write of `path` (absolute) or raise CommandRefused; returns a note for the
    model, usually empty."""
    # A symbolic link is judged by where it points as well (a link to config.yaml
    # planted in the workdir is still config.yaml, a control file).
    env = check_env(ctx, environment, environment.cwd)
    paths = [path, *(p for p in real_paths(path, environment)[1:] if classify_path(p, env))]
    equivalent = "; ".join(f"cat > {shlex.quote(p)}" for p in paths)
    return gate_command(equivalent, ctx, environment, environment.cwd, display=f"{tool} {path}")
