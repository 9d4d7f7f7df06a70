"""Whether a tool call may change files, so a checkpoint is taken before it runs.

A tool declared with `writes=` changes files. A shell command changes files unless
herald.safety's known-read-only classifier (the one the unattended policy uses) says it
only reads, and it runs no `git`: a repository's config can name programs that even
`git status` runs, so for an undo point git counts as writing. A wrong "may write"
costs one cheap snapshot; a wrong "read-only" loses data.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from herald.safety import check_read_only


@dataclass(frozen=True)
class ChangeIntent:
    tool: str
    command: str | None  # the shell text for a command, None for a file tool


def command_may_write(command: str) -> bool:
    """True unless `command` is known to only read."""
    verdict = check_read_only(command)
    if not verdict.read_only:
        return True
    return any(segment.command.argv[:1] == ["git"] for segment in verdict.segments)


def change_intent(name: str, writes: Sequence[str], args: dict[str, Any]) -> ChangeIntent | None:
    """What a call of tool `name` (declared with `writes`) with `args` may change, or
    None when it only reads."""
    if writes:
        return ChangeIntent(name, None)
    if name == "terminal":
        command = args.get("command")
        if not isinstance(command, str) or command_may_write(command):
            return ChangeIntent(name, command if isinstance(command, str) else "")
        return None
    if name == "execute_code":  # a script can write files itself, not only through tools
        return ChangeIntent(name, str(args.get("code") or ""))
    if name == "process" and args.get("action") == "write":
        # Input to a background shell is a command we cannot see whole: always may write.
        return ChangeIntent(name, str(args.get("input") or ""))
    return None
