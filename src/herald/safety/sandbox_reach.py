"""What a command can damage in the sandbox's working directory, for the relaxed
policy: a git history (``.git`` itself, anything in it, a directory holding
one), a file the host runs later, or ordinary project files (which only a
checkpoint makes undoable). Looks at the real filesystem, bounded.
"""

from __future__ import annotations

import fnmatch
import glob
import os
from collections.abc import Iterator

from herald.safety.host_executed import HOST_EXECUTED_PATHS, host_executed_target

# Entries walked looking for a .git below a path before giving up (and
# assuming there is one: an answer we cannot get must not relax anything).
WALK_LIMIT = 20_000
_GLOB_CHARS = frozenset("*?[")
# find expressions that widen what -name selects.
_FIND_WIDENERS = frozenset({"-o", "-or", "!", "-not", ",", "-false"})


def within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def expand(resolved: str) -> list[str]:
    """A path word as the shell would expand it (bash defaults: no dotglob);
    a pattern matching nothing stays itself."""
    if not any(ch in _GLOB_CHARS for ch in resolved):
        return [resolved]
    return [os.path.realpath(p) for p in glob.glob(resolved)] or [resolved]


class _TooMany(Exception):
    """The walk passed WALK_LIMIT entries."""


def _entries_below(root: str) -> Iterator[os.DirEntry[str]]:
    """Every entry under root, not following symlinks; raises _TooMany past the limit."""
    stack = [root]
    seen = 0
    while stack:
        current = stack.pop()
        try:
            entries = list(os.scandir(current))
        except OSError:
            continue
        for entry in entries:
            seen += 1
            if seen > WALK_LIMIT:
                raise _TooMany
            yield entry
            if entry.name != ".git" and entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)


def _git_dirs_below(path: str) -> list[str] | None:
    """Every ``.git`` at or under path (None: too many entries to know)."""
    if os.path.basename(path) == ".git":
        return [path]
    if not os.path.isdir(path) or os.path.islink(path):
        return []
    try:
        return [entry.path for entry in _entries_below(path) if entry.name == ".git"]
    except _TooMany:
        return None


def _name_matches(name: str, patterns: list[tuple[str, bool]]) -> bool:
    return all(
        fnmatch.fnmatchcase(name.lower() if fold else name, pattern) for pattern, fold in patterns
    )


def _names_match(
    root: str, patterns: list[tuple[str, bool]], *, include_root: bool = False
) -> bool:
    """Whether root (with include_root) or some entry below it matches every
    -name/-iname pattern (True when there are too many entries to know)."""
    if include_root and _name_matches(os.path.basename(root), patterns):
        return True
    if not os.path.isdir(root) or os.path.islink(root):
        return False
    try:
        return any(_name_matches(entry.name, patterns) for entry in _entries_below(root))
    except _TooMany:
        return True


def find_name_filter(words: list[str]) -> list[tuple[str, bool]] | None:
    """The AND-ed -name/-iname patterns of a find expression, or None when the
    expression can select files some other way (-o, !, no name test)."""
    if any(w in _FIND_WIDENERS for w in words):
        return None
    patterns: list[tuple[str, bool]] = []
    for i, word in enumerate(words[:-1]):
        if word == "-name":
            patterns.append((words[i + 1], False))
        elif word == "-iname":
            patterns.append((words[i + 1].lower(), True))
    return patterns or None


def history_damage(path: str, name_filter: list[tuple[str, bool]] | None = None) -> bool:
    """Whether deleting or rewriting everything under path can reach a git
    history; with a find's name filter, only entries it selects count."""
    if "/.git/" in path + "/":
        return name_filter is None or _names_match(path, name_filter)
    git_dirs = _git_dirs_below(path)
    if git_dirs is None:
        return True
    if name_filter is None:
        return bool(git_dirs)
    return any(_names_match(d, name_filter) for d in git_dirs)


def host_executed_damage(
    path: str, workdir: str, name_filter: list[tuple[str, bool]] | None = None
) -> str | None:
    """The host-executed file path is, is in, or holds (None when it touches
    none); with a find's name filter, only entries it selects count."""
    if within(path, workdir):
        what = host_executed_target(os.path.relpath(path, workdir))
        if what:
            return what
    for entry in HOST_EXECUTED_PATHS:
        target = os.path.join(workdir, entry.path)
        if not within(target, path) or not os.path.lexists(target):
            continue
        if name_filter is None or _names_match(target, name_filter, include_root=True):
            return entry.why
    return None
