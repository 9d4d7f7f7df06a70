"""Files in a project that the host runs later, and git commands that destroy
a repository's history.

Writing ``.git/hooks/post-checkout`` (or ``core.hooksPath`` in
``.git/config``, an ``.envrc``, a VS Code task) is running code as the owner
the next time git, direnv or an editor touches the project, possibly as root
and long after the session: so it needs approval on every backend, and the
sandboxes mount these paths read-only (`HOST_EXECUTED_PATHS` is the one list
both use). ``.git/commondir`` is on it because git reads the config and hooks
of whatever directory it names.

The second half is history: ``git reflog expire``, ``gc --prune=now``,
``update-ref -d`` remove what ``git reset --hard`` would otherwise leave
recoverable. Pure string work, no I/O, like the rest of `check_command`.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import Literal

from herald.safety.invocation import Context, Invocation, git_subcommand

HOST_EXECUTED_RULE = "dangerous.host_executed_write"


@dataclass(frozen=True)
class HostExecuted:
    """One project path the host acts on (relative to the working directory)."""

    path: str
    kind: Literal["dir", "file"]
    why: str
    # Sandboxes mount a read-only placeholder where the path does not exist
    # yet (so it cannot be created either); False: only protected once present.
    placeholder: bool = True


HOST_EXECUTED_PATHS: tuple[HostExecuted, ...] = (
    HostExecuted(".git/hooks", "dir", "git runs its hooks on checkout, commit, merge, push"),
    HostExecuted(".git/config", "file", "git runs core.hooksPath, core.fsmonitor, aliases, filters"),
    HostExecuted(".git/commondir", "file", "git takes config and hooks from the directory it names"),
    HostExecuted(".git/config.worktree", "file", "per-worktree git config", placeholder=False),
    HostExecuted(".git/modules", "dir", "submodules' hooks and config", placeholder=False),
    HostExecuted(".git/worktrees", "dir", "other worktrees' gitdir and config", placeholder=False),
    HostExecuted(".envrc", "file", "direnv runs it when a shell enters the directory"),
    HostExecuted(".herald", "dir", "Herald's project plugins and skills"),
    HostExecuted(".vscode", "dir", "VS Code tasks, launch configs and settings (terminal, interpreters)"),
    HostExecuted(".idea", "dir", "JetBrains run configurations and tool settings"),
    HostExecuted(".devcontainer", "dir", "dev container build and post-create commands"),
    # Hook managers: the installed git hook runs what these say at the next commit.
    HostExecuted(".pre-commit-config.yaml", "file", "pre-commit runs its hooks", placeholder=False),
    HostExecuted(".husky", "dir", "husky's git hooks", placeholder=False),
    HostExecuted(".githooks", "dir", "git hooks kept in the tree", placeholder=False),
    HostExecuted("lefthook.yml", "file", "lefthook's git hooks", placeholder=False),
    HostExecuted(".lefthook.yml", "file", "lefthook's git hooks", placeholder=False),
    HostExecuted(".overcommit.yml", "file", "overcommit's git hooks", placeholder=False),
)  # fmt: skip

# Directory names whose whole content the host acts on, wherever they are.
_EDITOR_DIRS = {".herald": "Herald's project plugins and skills (.herald/)",
                ".vscode": "editor tasks and settings (.vscode/)",
                ".idea": "JetBrains run configurations (.idea/)",
                ".devcontainer": "dev container commands (.devcontainer/)"}  # fmt: skip
_HOOK_MANAGER_FILES = frozenset({".pre-commit-config.yaml", "lefthook.yml", "lefthook.yaml",
                                 ".lefthook.yml", ".overcommit.yml"})  # fmt: skip
_HOOK_DIRS = frozenset({".husky", ".githooks"})
_GIT_FILES = frozenset({"config", "commondir", "config.worktree"})
_GIT_DIRS = frozenset({"hooks", "modules", "worktrees"})


def _is_a_home(parts: list[str], absolute: bool) -> bool:
    if not absolute:
        return parts[:1] == ["~"] and len(parts) == 1
    return parts == ["root"] or (len(parts) == 2 and parts[0] in ("home", "Users"))


def host_executed_target(path: str) -> str | None:
    """What the host would run from a write to `path` (canonical, relative or
    absolute), or None for an ordinary file."""
    parts = [p for p in path.split("/") if p and p != "."]
    if not parts:
        return None
    name = parts[-1]
    if name == ".envrc":
        return "a direnv .envrc (run when a shell enters the directory)"
    if name == ".gitconfig" or path.endswith(".config/git/config"):
        return "a git configuration file (git runs hooks, fsmonitor and aliases from it)"
    if name == ".git":
        return "a git directory or gitdir file (what git runs depends on it)"
    if name in _HOOK_MANAGER_FILES:
        return f"a git hook manager's configuration ({name}: run at the next commit)"
    if any(part in _HOOK_DIRS for part in parts):
        return "git hooks kept in the tree (.husky/, .githooks/)"
    for i, part in enumerate(parts):
        if part == ".herald" and _is_a_home(parts[:i], path.startswith("/")):
            continue  # Herald's own home: the sensitive-write rule's business
        if part in _EDITOR_DIRS:
            return _EDITOR_DIRS[part]
        if part == ".git" and i + 1 < len(parts):
            child = parts[i + 1]
            if child in _GIT_DIRS:
                return f"git {child} (.git/{child}: run by git on the host)"
            if child in _GIT_FILES and i + 2 == len(parts):
                return f"git configuration (.git/{child}: hooksPath, fsmonitor, aliases)"
    return None


def judge_host_executed(path: str, segment: str, ctx: Context) -> None:
    what = host_executed_target(posixpath.normpath(path) if path else path)
    if what:
        ctx.approval(
            HOST_EXECUTED_RULE, f"writes {what}, which the host runs later ({path})", segment
        )


# -- git config: rewriting the whole configuration ---------------------------------
# Which keys make git run a program (core.hooksPath, core.fsmonitor, alias.x=!…,
# filter.*, include.path …) is judged once, by value, in rules_persistence
# (dangerous.persistence); here only the forms that hand the whole file over.

_CONFIG_WHOLE_FILE = frozenset({"edit", "rename-section", "-e", "--edit", "--rename-section"})


def _git_config(rest: list[str], inv: Invocation, ctx: Context) -> None:
    if any(arg.split("=", 1)[0] in _CONFIG_WHOLE_FILE for arg in rest[:4]):
        ctx.approval(
            HOST_EXECUTED_RULE,
            "lets the whole git configuration be rewritten (git config)",
            inv.segment,
        )


# -- git history ------------------------------------------------------------------


def rule_git_local(inv: Invocation, ctx: Context) -> None:
    """git config that hands over the whole file, and hooks from a template directory.
    (History that cannot be recovered — reflog expire, gc --prune=now, update-ref -d —
    is rules_dataloss's dangerous.git_destructive.)"""
    found = git_subcommand(inv.args)
    if found is None:
        return
    sub, rest = found
    if sub == "config":
        _git_config(rest, inv, ctx)
        return
    if sub in ("init", "clone") and any(
        a == "--template" or a.startswith("--template=") for a in rest
    ):
        # git init in an existing repository copies the template's hooks into it.
        what = f"installs hooks from a template directory (git {sub} --template)"
        ctx.approval(HOST_EXECUTED_RULE, what, inv.segment)
