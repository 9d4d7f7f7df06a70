"""Which files of a workdir a checkpoint can hold within the size limits.

One `os.scandir` walk (no symlink is followed) sizes every file; git hashes only what
this walk lets through, so a multi-gigabyte file never reaches the shadow repository.
The project's own `.git` is one unit: all of it or none (a repository missing half its
pack files is not a repository), and only `max_total_mb` applies to it. A nested
repository (a subdirectory with its own `.git`) would be stored by git as a bare
commit pointer, which restores nothing, so it is left out and listed instead.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

MB = 1024 * 1024
DOT_GIT = ".git"


@dataclass(frozen=True)
class Limits:
    max_file_bytes: int
    max_total_bytes: int

    @classmethod
    def from_mb(cls, max_file_mb: float, max_total_mb: float) -> Limits:
        return cls(int(max_file_mb * MB), int(max_total_mb * MB))


@dataclass
class Scan:
    """`left_out`: relative path -> why it is not in the checkpoint."""

    left_out: dict[str, str] = field(default_factory=dict)
    include_dot_git: bool = False
    total_bytes: int = 0


def _entries(
    top: str, descend: Callable[[str, os.DirEntry[str]], bool]
) -> Iterator[tuple[str, os.DirEntry[str], os.stat_result]]:
    """(directory, entry, its lstat) for everything below `top`, symlinks not followed;
    a directory is entered when `descend(directory, entry)` says so."""
    stack = [top]
    while stack:
        directory = stack.pop()
        try:
            entries = os.scandir(directory)
        except OSError:
            continue
        with entries:
            for entry in entries:
                try:
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                yield directory, entry, info
                if stat.S_ISDIR(info.st_mode) and descend(directory, entry):
                    stack.append(entry.path)


def _tree_size(top: str) -> int:
    walk = _entries(top, lambda _directory, _entry: True)
    return sum(info.st_size for _, _, info in walk if stat.S_ISREG(info.st_mode))


def scan_workdir(workdir: Path, limits: Limits) -> Scan:
    scan = Scan()
    sizes: list[tuple[int, str]] = []  # candidates for the total budget
    root = str(workdir)
    prefix = len(root) + 1

    def descend(directory: str, entry: os.DirEntry[str]) -> bool:
        """Into ordinary folders; a .git (the project's is sized whole) and a nested
        repository are left out of the walk."""
        rel = entry.path[prefix:]
        if entry.name == DOT_GIT:
            if directory == root:
                sizes.append((_tree_size(entry.path), DOT_GIT))
            else:
                scan.left_out[rel[: -len(DOT_GIT) - 1]] = "a nested git repository"
            return False
        if os.path.isdir(os.path.join(entry.path, DOT_GIT)):
            scan.left_out[rel] = "a nested git repository"
            return False
        return True

    for _directory, entry, info in _entries(root, descend):
        if not stat.S_ISREG(info.st_mode):
            continue
        rel = entry.path[prefix:]
        if info.st_size > limits.max_file_bytes:
            scan.left_out[rel] = f"{info.st_size / MB:.1f} MB, over checkpoints.max_file_mb"
        else:
            sizes.append((info.st_size, rel))
    total = sum(size for size, _ in sizes)
    if total > limits.max_total_bytes:
        for size, rel in sorted(sizes, reverse=True):
            if total <= limits.max_total_bytes:
                break
            total -= size
            scan.left_out[rel] = f"{size / MB:.1f} MB, over checkpoints.max_total_mb"
    scan.total_bytes = total
    scan.include_dot_git = any(rel == DOT_GIT for _, rel in sizes) and DOT_GIT not in scan.left_out
    return scan


def literal_excludes(paths: list[str]) -> bytes:
    """The pathspec list for `git add --pathspec-from-file=- --pathspec-file-nul`:
    everything, minus each left-out path taken literally (no glob in a file name)."""
    specs = ["."] + [f":(exclude,literal){p}" for p in paths]
    return b"\0".join(s.encode("utf-8", "surrogateescape") for s in specs) + b"\0"
