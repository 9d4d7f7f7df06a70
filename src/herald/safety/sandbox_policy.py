"""Relaxed approvals inside a real sandbox (``approvals.sandboxed: relaxed``).

A command flagged as dangerous runs without a prompt when everything it can
damage is the sandbox itself: every rule it tripped is one of
`SANDBOX_LOCAL_RULES`, every path it names resolves (symlinks followed) into
the session's working directory or its private ``/tmp``, and nothing in it
reaches outside: no writable mount beyond the working directory, no ``ssh``,
``docker`` and the like, no network client when the sandbox has network,
no ``cd`` (which would change what relative paths mean), no unexpanded
``$VAR`` or substitution (whose value is unknown here) and, when a writable
mount exists beyond the working directory, no compound command (one part
could create a symlink into the mount that another part follows). Code whose targets
cannot be read off the command line (inline interpreter code, a script piped
into a shell) qualifies only in a sealed sandbox: no network and no writable
mount beyond the working directory.

Hard-line refusals and deny globs are decided before this is consulted and
are never lifted; a command that does not qualify goes on to the usual
prompts. Unlike `check_command` this looks at the real filesystem (to follow
symlinks), which is why it lives apart from the pure checker.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass

from herald.safety.commands import CommandAnalysis

# Damage these rules describe stays inside the sandbox when the paths do.
SANDBOX_LOCAL_RULES = frozenset(
    {
        "dangerous.recursive_delete",
        "dangerous.delete",
        "dangerous.find_delete",
        "dangerous.recursive_permissions",
        "dangerous.git_destructive",
        "dangerous.kill_process_group",  # only the sandbox's own processes are visible
        "dangerous.kill_init",  # pid 1 is the sandbox's init
    }
)
# Code whose targets cannot be read off the command line: it stays in the sandbox
# only when the sandbox has no network and no writable mount beyond the workdir.
OPAQUE_RULES = frozenset(
    {"dangerous.inline_code", "dangerous.pipe_to_shell", "dangerous.sql_destructive"}
)

# Programs whose whole point is another machine or the host's daemons.
OUTWARD_PROGRAMS = frozenset(
    {
        "ssh", "scp", "sftp", "sshfs", "mosh", "docker", "podman", "nerdctl", "kubectl",
        "helm", "nc", "ncat", "netcat", "socat", "telnet", "ftp", "rclone", "aws", "gcloud",
        "az", "gh", "terraform", "pulumi", "ansible", "ansible-playbook", "rsync",
    }
)  # fmt: skip
NETWORK_PROGRAMS = frozenset({"curl", "wget", "http", "https", "aria2c", "lynx", "w3m"})
_GIT_REMOTE = frozenset({"push", "fetch", "pull", "clone", "remote", "ls-remote"})
_DIRECTORY_CHANGES = frozenset({"cd", "pushd", "popd"})
_REDIRECT_CHARS = "<>&|0123456789"


@dataclass(frozen=True)
class SandboxScope:
    """What the running sandbox exposes (built by the tool layer from the
    environment's `SandboxSpec`)."""

    backend: str  # bwrap | docker
    workdir: str
    writable_outside: tuple[str, ...] = ()  # rw mounts beyond the working directory
    network: bool = False
    private_dirs: tuple[str, ...] = ("/tmp",)  # the session's own, not the host's
    home: str | None = None  # what ``~`` means inside (None: ``~`` is never relaxed)


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _words(segment: str) -> list[str] | None:
    try:
        return shlex.split(segment, comments=False, posix=True)
    except ValueError:
        return None


def _outward(words: list[str], scope: SandboxScope) -> str | None:
    program = os.path.basename(words[0])
    if program in OUTWARD_PROGRAMS:
        return f"{program} reaches outside the sandbox"
    if program == "git" and any(w in _GIT_REMOTE for w in words[1:]):
        return "git talks to a remote"
    if scope.network and program in NETWORK_PROGRAMS:
        return f"{program} uses the network, which this sandbox allows"
    if program in _DIRECTORY_CHANGES:
        return "it changes directory, so relative paths cannot be checked"
    return None


def _path_outside(word: str, scope: SandboxScope, cwd: str) -> str | None:
    if word.startswith("--") and "=" in word:
        word = word.split("=", 1)[1]
    elif word.startswith("-"):
        return None
    word = word.lstrip(_REDIRECT_CHARS)
    if not word:
        return None
    if word == "~" or word.startswith("~/"):
        if scope.home is None:
            return word
        word = scope.home + word[1:]
    elif word.startswith("~"):
        return word  # another user's home
    resolved = os.path.realpath(os.path.join(cwd, word))
    if any(_within(resolved, root) for root in scope.writable_outside):
        return word
    inside = (scope.workdir, *scope.private_dirs)
    if not any(_within(resolved, os.path.realpath(root)) for root in inside):
        return word
    return None


def sandbox_relaxation(analysis: CommandAnalysis, scope: SandboxScope, cwd: str) -> str | None:
    """Why this flagged command may run unasked in the sandbox, or None when it
    must go through the usual approval."""
    verdict = analysis.verdict
    if verdict.is_hardline or verdict.allowed:
        return None
    sealed = not scope.network and not scope.writable_outside
    allowed_rules = SANDBOX_LOCAL_RULES | (OPAQUE_RULES if sealed else frozenset())
    if not verdict.rules or not set(verdict.rules) <= allowed_rules:
        return None
    if not _within(os.path.realpath(cwd), os.path.realpath(scope.workdir)):
        return None
    if scope.writable_outside and analysis.compound:
        # One part could create the symlink another follows into the mount.
        return None
    for segment in analysis.segments or (analysis.normalized,):
        if "$" in segment or "`" in segment:
            return None
        words = _words(segment)
        if not words:
            return None
        if _outward(words, scope) is not None:
            return None
        if any(_path_outside(word, scope, cwd) for word in words[1:]):
            return None
    return (
        f"inside the {scope.backend} sandbox this only affects the sandbox "
        "(approvals.sandboxed: relaxed)"
    )
