"""What a sandbox keeps read-only inside the paths it mounts read-write: project
files the host runs later (`herald.safety.HOST_EXECUTED_PATHS`: git hooks and
config, .envrc, .herald/, editor task files) and, where a writable mount shows
part of the home, the shell start-up files, autostart entries and user units
that would run a planted command at the owner's next login.

How a path is kept read-only inside a read-write bind (bwrap and docker alike):

- an existing file or directory is bound read-only over itself; being a mount
  point it can be neither renamed nor deleted;
- its parent inside the working directory (``.git``) is bound over itself
  first ("pinned"), since a plain directory holding a mount point can still be
  renamed and replaced by a fresh one;
- a path that does not exist yet is created as an empty placeholder (an empty
  directory, an empty file) and bound read-only, so it cannot be created from
  inside either; ``.git/commondir`` is created holding ``.`` (git's "this
  directory"), because git fails on an empty one. The backend removes the
  placeholders it made when the session closes, if they are still empty.

A protected name that is a symlink cannot be kept (the link itself could be
replaced), so the sandbox refuses to start there; a repository created during
a session is protected from its next command on.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Literal

from herald.safety import HOST_EXECUTED_PATHS

Action = Literal["pin", "ro", "new_dir", "new_file"]

COMMONDIR_CONTENT = ".\n"

# Under a home: what runs at the owner's next login, shell or desktop session.
STARTUP_FILES = (
    ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".bash_aliases", ".profile",
    ".zshrc", ".zshenv", ".zprofile", ".zlogin", ".zlogout", ".kshrc", ".mkshrc", ".cshrc",
    ".tcshrc", ".login", ".xprofile", ".xinitrc", ".xsessionrc", ".xsession", ".pam_environment",
    ".envrc", ".gitconfig", ".vimrc", ".tmux.conf", ".emacs", ".emacs.d", ".config/nvim",
    ".config/fish", ".config/autostart", ".config/systemd", ".config/environment.d",
    ".config/git", ".config/direnv", ".cargo/config.toml", ".cargo/config", ".local/bin", "bin",
    ".local/share/applications", "Library/LaunchAgents",
)  # fmt: skip


@dataclass(frozen=True)
class Protection:
    path: str  # absolute, the same inside the sandbox
    action: Action
    why: str
    content: str = ""  # for new_file


class UnprotectableError(Exception):
    """A host-executed path the sandbox cannot keep read-only (a symlink)."""


def within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _existing(path: str, why: str) -> Protection:
    if os.path.islink(path):
        raise UnprotectableError(
            f"{path} is a symlink, which the sandbox cannot keep read-only ({why}); "
            "replace it with the real file or directory, or use another backend"
        )
    return Protection(path, "ro", why)


_HOOKS_PATH_RE = re.compile(r"^\s*hookspath\s*=\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)


def configured_hooks_dirs(workdir: str, home: str) -> list[str]:
    """Directories inside workdir that a core.hooksPath (the repository's or
    your global one) makes git run hooks from, e.g. husky's ``.husky/_``."""
    found = []
    for config in (
        os.path.join(workdir, ".git", "config"),
        os.path.join(home, ".gitconfig"),
        os.path.join(home, ".config", "git", "config"),
    ):
        try:
            with open(config, encoding="utf-8", errors="replace") as handle:
                text = handle.read(1 << 20)
        except OSError:
            continue
        for raw in _HOOKS_PATH_RE.findall(text):
            value = os.path.expanduser(raw.strip().strip('"'))
            path = os.path.normpath(os.path.join(workdir, value))
            if os.path.basename(path) == "_":  # husky: its stubs run the files one up
                path = os.path.dirname(path)
            if path != workdir and within(path, workdir) and path not in found:
                found.append(path)
    return found


def project_protections(workdir: str, home: str | None = None) -> list[Protection]:
    """Protections for the host-executed files of workdir, parents first."""
    plan: list[Protection] = []
    git = os.path.join(workdir, ".git")
    for entry in HOST_EXECUTED_PATHS:
        path = os.path.join(workdir, entry.path)
        inside_git = entry.path.startswith(".git/")
        if inside_git and (os.path.islink(git) or not os.path.isdir(git)):
            continue  # no repository (yet), or .git is a file: see below
        if os.path.lexists(path):
            plan.append(_existing(path, entry.why))
        elif entry.placeholder:
            if entry.path == ".git/commondir":
                plan.append(Protection(path, "new_file", entry.why, COMMONDIR_CONTENT))
            else:
                kind: Action = "new_dir" if entry.kind == "dir" else "new_file"
                plan.append(Protection(path, kind, entry.why))
    listed = {p.path for p in plan}
    for hooks in configured_hooks_dirs(workdir, home or os.path.expanduser("~")):
        if hooks in listed or any(within(hooks, p) for p in listed):
            continue
        why = "git runs hooks from here (core.hooksPath)"
        if os.path.lexists(hooks):
            plan.append(_existing(hooks, why))
        elif os.path.isdir(os.path.dirname(hooks)):
            plan.append(Protection(hooks, "new_dir", why))
    if os.path.islink(git):
        raise UnprotectableError(
            f"{git} is a symlink, which the sandbox cannot keep from being replaced "
            "(git would then run the hooks of whatever it points at); use another backend"
        )
    if os.path.isfile(git):  # a gitdir file: where it points decides what git runs
        plan.insert(0, Protection(git, "ro", "says where git finds its config and hooks"))
    elif os.path.isdir(git):
        plan.insert(0, Protection(git, "pin", "holds git's hooks and config"))
    return plan


def startup_protections(
    home: str, rw_roots: tuple[str, ...], hidden: tuple[str, ...]
) -> list[Protection]:
    """Existing start-up files of home that a read-write mount shows (and that
    are not hidden anyway)."""
    plan = []
    for name in STARTUP_FILES:
        path = os.path.join(home, name)
        if not os.path.lexists(path) or any(within(path, h) for h in hidden):
            continue
        if any(within(path, root) for root in rw_roots):
            real = os.path.realpath(path)
            if any(within(real, root) for root in rw_roots):
                plan.append(Protection(real, "ro", "runs at your next login or shell"))
    return plan


def sandbox_protections(
    workdir: str, rw_roots: tuple[str, ...], home: str, hidden: tuple[str, ...]
) -> list[Protection]:
    """Everything a sandbox keeps read-only, parents first (nothing is created:
    see make_placeholders). Raises UnprotectableError."""
    plan = project_protections(workdir, home) + startup_protections(home, rw_roots, hidden)
    return _pin_parents(plan, rw_roots)


def _pin_parents(plan: list[Protection], rw_roots: tuple[str, ...]) -> list[Protection]:
    """Pin every directory between a writable mount and a protected path: a
    plain directory holding a mount point can be renamed and rebuilt."""
    have = {item.path for item in plan}
    pins = []
    for item in plan:
        roots = [r for r in rw_roots if within(item.path, r) and item.path != r]
        if not roots:
            continue
        root = max(roots, key=len)
        parent = os.path.dirname(item.path)
        while parent != root and within(parent, root) and parent not in have:
            if os.path.islink(parent):
                raise UnprotectableError(
                    f"{parent} is a symlink above {item.path} ({item.why}), which the sandbox "
                    "cannot keep from being replaced; use another backend"
                )
            if os.path.isdir(parent):
                pins.append(Protection(parent, "pin", "holds a read-only path"))
            have.add(parent)
            parent = os.path.dirname(parent)
    # Parents first: a mount inside another must come after it.
    return sorted(pins + plan, key=lambda item: item.path.count("/"))


def make_placeholders(plan: list[Protection]) -> list[Protection]:
    """Create the missing paths of plan on the host; returns those it made."""
    made = []
    for item in plan:
        if os.path.lexists(item.path):
            continue
        try:
            if item.action == "new_dir":
                os.mkdir(item.path, 0o755)
            elif item.action == "new_file":
                fd = os.open(item.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
                with os.fdopen(fd, "w") as handle:
                    handle.write(item.content)
            else:
                continue
        except FileExistsError:
            continue
        made.append(item)
    return made


def remove_placeholders(made: list[Protection]) -> None:
    """Remove placeholders that are still as they were made (empty)."""
    for item in reversed(made):
        try:
            if item.action == "new_dir":
                os.rmdir(item.path)  # only when still empty
            elif os.path.isfile(item.path) and not os.path.islink(item.path):
                with open(item.path, encoding="utf-8", errors="replace") as handle:
                    if handle.read(len(item.content) + 1) == item.content:
                        os.unlink(item.path)
        except OSError:
            pass
