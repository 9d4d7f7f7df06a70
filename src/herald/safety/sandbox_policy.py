"""Relaxed approvals inside a real sandbox (``approvals.sandboxed: relaxed``).

The working directory of a sandbox is the owner's real project, mounted
read-write: deleting it is not "sandbox-only damage". So a command flagged
as dangerous runs without a prompt only when everything it can damage is
either the sandbox's own (its private ``/tmp`` and home) or project files
covered by a checkpoint taken for it (`SandboxScope.checkpointed`, a port the
checkpoint store fills; without it, project damage asks). Never relaxed,
checkpoint or not: a git history (``rm -rf .git``, a directory holding one,
``git reset --hard``, ``git clean -fdx`` and every other
``dangerous.git_destructive``), files the host runs later (.git/hooks, .envrc
… see :mod:`herald.safety.host_executed`), and anything reaching outside: a
writable mount beyond the working directory, ``ssh``, ``docker`` and the
like, a network client when the sandbox has network, ``cd`` (which would
change what relative paths mean), an unexpanded ``$VAR`` or substitution
(whose value is unknown here) and, when a writable mount exists beyond the
working directory, a compound command (one part could create a symlink into
the mount that another part follows). Code whose targets cannot be read off
the command line (inline interpreter code, a script piped into a shell) can
reach the whole working directory, so it qualifies only in a sealed sandbox
(no network, no writable mount beyond the working directory) whose working
directory holds no git history, with a checkpoint of all of it.

Hard-line refusals and deny globs are decided before this is consulted and
are never lifted; a command that does not qualify goes on to the usual
prompts. Unlike `check_command` this looks at the real filesystem (to follow
symlinks and find a ``.git``), which is why it lives apart from the pure
checker.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass

from herald.safety.commands import CommandAnalysis
from herald.safety.sandbox_reach import (
    expand,
    find_name_filter,
    history_damage,
    host_executed_damage,
    within,
)

# Damage these rules describe stays inside the sandbox when the paths do.
# dangerous.git_destructive is not here: it is history, which no checkpoint of
# the working tree brings back.
SANDBOX_LOCAL_RULES = frozenset(
    {
        "dangerous.recursive_delete",
        "dangerous.delete",
        "dangerous.find_delete",
        "dangerous.recursive_permissions",
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
# cd changes what relative paths mean; shopt/set can turn on dotglob (".*" then *).
_UNCHECKABLE = frozenset({"cd", "pushd", "popd", "shopt", "set"})
# A redirect glued to its target (2>/tmp/log, &>>out): only the operator goes;
# a file name that starts with digits (9/tmp/x) stays a relative path.
_REDIRECT_RE = re.compile(r"^(?:\d*|&)(?:>>|>\||>&|<>|<<<|<<|<&|>|<)")
# find tests whose value is a pattern, not a path.
_FIND_PATTERN_TESTS = frozenset({"-name", "-iname", "-path", "-ipath", "-wholename",
                                 "-iwholename", "-regex", "-iregex", "-type", "-xtype",
                                 "-user", "-group", "-perm", "-size", "-mtime", "-mmin",
                                 "-ctime", "-cmin", "-atime", "-amin", "-maxdepth",
                                 "-mindepth", "-newer"})  # fmt: skip

# Programs that change no file: their words are checked but are no damage.
_READ_ONLY_PROGRAMS = frozenset({"echo", "printf", "true", "false", ":", "ls", "cat", "pwd",
                                 "test", "[", "grep", "head", "tail", "wc", "stat", "du",
                                 "df", "date", "sleep", "which", "file"})  # fmt: skip

Checkpointed = Callable[[tuple[str, ...]], bool]


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
    # Whether a checkpoint taken for this command covers these working-directory
    # paths (absolute, symlinks resolved). None: no checkpoint store, so damage
    # to the working directory is never relaxed.
    checkpointed: Checkpointed | None = None


class _Asks(Exception):
    """The command must go through the usual approval (the message says why)."""


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
    if program in _UNCHECKABLE:
        return f"{program} changes how the rest of the command is read"
    return None


def _resolve(word: str, scope: SandboxScope, cwd: str) -> list[str] | None:
    """The real paths a word can name (empty: not a path; raises when it is
    somewhere relaxed approvals never reach)."""
    if word.startswith("--") and "=" in word:
        word = word.split("=", 1)[1]
    elif word.startswith("-"):
        return []
    stripped = _REDIRECT_RE.sub("", word, count=1)
    operator = word[: len(word) - len(stripped)]
    if operator.endswith("&") and (stripped.isdigit() or stripped == "-"):
        return []  # 2>&1, >&-: a file descriptor, not a file
    word = stripped
    if not word:
        return []
    if word == "~" or word.startswith("~/"):
        if scope.home is None:
            raise _Asks(word)
        word = scope.home + word[1:]
    elif word.startswith("~"):
        raise _Asks(word)  # another user's home
    return expand(os.path.realpath(os.path.join(cwd, word)))


class _Reach:
    """Working-directory paths a command damages, checked as they are added."""

    def __init__(self, scope: SandboxScope) -> None:
        self.scope = scope
        self.workdir = os.path.realpath(scope.workdir)
        self.private = tuple(os.path.realpath(d) for d in scope.private_dirs)
        self.paths: set[str] = set()

    def add(
        self,
        path: str,
        name_filter: list[tuple[str, bool]] | None = None,
        *,
        readonly: bool = False,
    ) -> None:
        """Count path as damaged (unless a read-only program only names it);
        raise _Asks when it is somewhere relaxed approvals never reach. A path
        is checked even when only named: `ln -s .git x` prepares the damage."""
        if any(within(path, root) for root in self.scope.writable_outside):
            raise _Asks(f"{path} is a writable mount outside the working directory")
        if not within(path, self.workdir):
            # The workdir first: it may itself lie under /tmp or the home.
            if within(self.workdir, path):
                raise _Asks(f"{path} holds the whole working directory")
            if any(within(path, root) for root in self.private):
                return
            raise _Asks(f"{path} is outside the sandbox")
        if history_damage(path, name_filter):
            raise _Asks(f"{path} holds git history, which no checkpoint brings back")
        what = host_executed_damage(path, self.workdir, name_filter)
        if what:
            raise _Asks(f"{path}: {what}")
        if not readonly:
            self.paths.add(path)


def _segment_reach(words: list[str], reach: _Reach, scope: SandboxScope, cwd: str) -> None:
    program = os.path.basename(words[0])
    args = words[1:]
    if program == "find":
        # Start paths reach everything below them, narrowed by a name filter.
        starts = 0
        while starts < len(args) and not args[starts].startswith(("-", "(", "!")):
            starts += 1
        name_filter = find_name_filter(args[starts:])
        for word in args[:starts] or ["."]:
            for path in _resolve(word, scope, cwd) or []:
                reach.add(path, name_filter)
        expression = args[starts:]
        args = [w for i, w in enumerate(expression)
                if not (i and expression[i - 1] in _FIND_PATTERN_TESTS)]  # fmt: skip
        args = [w for w in args if w not in _FIND_PATTERN_TESTS]
    for word in args:
        for path in _resolve(word, scope, cwd) or []:
            reach.add(path, readonly=program in _READ_ONLY_PROGRAMS)


def sandbox_relaxation(analysis: CommandAnalysis, scope: SandboxScope, cwd: str) -> str | None:
    """Why this flagged command may run unasked in the sandbox, or None when it
    must go through the usual approval."""
    verdict = analysis.verdict
    if verdict.is_hardline or verdict.allowed:
        return None
    sealed = not scope.network and not scope.writable_outside
    rules = set(verdict.rules)
    allowed_rules = SANDBOX_LOCAL_RULES | (OPAQUE_RULES if sealed else frozenset())
    if not rules or not rules <= allowed_rules:
        return None
    if not within(os.path.realpath(cwd), os.path.realpath(scope.workdir)):
        return None
    if scope.writable_outside and analysis.compound:
        # One part could create the symlink another follows into the mount.
        return None
    reach = _Reach(scope)
    try:
        for segment in analysis.segments or (analysis.normalized,):
            if "$" in segment or "`" in segment:
                return None
            words = _words(segment)
            if not words or _outward(words, scope) is not None:
                return None
            _segment_reach(words, reach, scope, cwd)
        if rules & OPAQUE_RULES:
            reach.add(reach.workdir)  # code can touch any of it
            reach.paths = {reach.workdir}
    except _Asks:
        return None
    if reach.paths:
        if scope.checkpointed is None or not scope.checkpointed(tuple(sorted(reach.paths))):
            return None
        return (
            f"inside the {scope.backend} sandbox this only changes files a checkpoint taken "
            "for it can restore (approvals.sandboxed: relaxed)"
        )
    return (
        f"inside the {scope.backend} sandbox this only affects the sandbox's private /tmp, "
        "home or processes (approvals.sandboxed: relaxed)"
    )
