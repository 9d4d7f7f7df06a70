"""Whether a tool call may change files, so a checkpoint is taken before it runs.

A tool declared with `writes=` changes files. A shell command changes files unless
it is known read-only: `command_may_write` is the one place that decides, so the
shared known-read-only classifier (herald.safety, feat/unattended) can replace the
local list here without touching the callers. The local rule errs towards "may
write": any redirection, substitution, quoting of an operator or a program not on a
short read-only list counts, as does anything `check_command` does not simply allow.
A wrong "may write" costs one cheap snapshot; a wrong "read-only" loses data.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from herald.safety import check_command

# Programs that only read, in every form the model is likely to use them. Anything
# that can run another program or write a named output file is absent (env, xargs,
# sort -o, uniq's second argument, tree -o, file -C; git, whose repository config can name
# programs that even `git status` runs) or has those options checked below.
READ_ONLY_PROGRAMS = frozenset(
    {
        "ls", "cat", "head", "tail", "wc", "pwd", "echo", "grep", "egrep", "fgrep", "rg",
        "stat", "du", "df", "which", "whoami", "uname", "id", "true", "diff", "cmp",
        "realpath", "basename", "dirname", "test", "[", "nl", "cut", "tr",
        "md5sum", "sha256sum", "find",
    }
)  # fmt: skip
FIND_WRITES = re.compile(r"^-(delete|exec|execdir|ok|okdir|fprint|fprint0|fprintf|fls)$")
# Options that run a program (rg --pre runs a preprocessor per file).
OPTION_WRITES = {"rg": ("--pre",)}
# Anything that can write or run code behind the program's back: redirections,
# substitutions, quotes (which could hide an operator from this simple split),
# escapes and expansions.
UNSAFE_CHARS = re.compile(r"[<>`$\\'\"]")
SEPARATORS = re.compile(r"&&|\|\||[;&|\n()]")
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


@dataclass(frozen=True)
class ChangeIntent:
    tool: str
    command: str | None  # the shell text for a command, None for a file tool


def _segment_reads_only(words: list[str]) -> bool:
    if ASSIGNMENT.match(words[0]):
        return False  # PATH=… or LD_PRELOAD=… makes `ls` any program
    program, args = words[0], words[1:]
    if program not in READ_ONLY_PROGRAMS:
        return False
    if program == "find":
        return not any(FIND_WRITES.match(a) for a in args)
    risky = OPTION_WRITES.get(program, ())
    return not any(a.startswith(option) for a in args for option in risky)


def command_may_write(command: str) -> bool:
    """True unless `command` is known to only read. The swap point for the shared
    known-read-only classifier."""
    if check_command(command).level != "allow":
        return True
    if UNSAFE_CHARS.search(command):
        return True
    segments = [s.split() for s in SEPARATORS.split(command)]
    segments = [s for s in segments if s]
    if not segments:
        return False
    return not all(_segment_reads_only(words) for words in segments)


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
    if name == "process" and args.get("action") == "write":
        # Input to a background shell is a command we cannot see whole: always may write.
        return ChangeIntent(name, str(args.get("input") or ""))
    return None
