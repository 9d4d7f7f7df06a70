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


def _tree_size(top: str) -> int:
    total = 0
    stack = [top]
    while stack:
        try:
            entries = os.scandir(stack.pop())
        except OSError:
            continue
        with entries:
            for entry in entries:
                try:
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISDIR(info.st_mode):
                    stack.append(entry.path)
                elif stat.S_ISREG(info.st_mode):
                    total += info.st_size
    return total


def scan_workdir(workdir: Path, limits: Limits) -> Scan:
    scan = Scan()
    sizes: list[tuple[int, str]] = []  # candidates for the total budget
    root = str(workdir)
    prefix = len(root) + 1
    stack = [root]
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
                rel = entry.path[prefix:]
                if stat.S_ISDIR(info.st_mode):
                    if entry.name == DOT_GIT:
                        if directory == root:
                            sizes.append((_tree_size(entry.path), DOT_GIT))
                        else:
                            parent = rel[: -len(DOT_GIT) - 1]
                            scan.left_out[parent] = "a nested git repository"
                        continue
                    if os.path.isdir(os.path.join(entry.path, DOT_GIT)):
                        scan.left_out[rel] = "a nested git repository"
                        continue
                    stack.append(entry.path)
                elif stat.S_ISREG(info.st_mode):
                    if info.st_size > limits.max_file_bytes:
                        scan.left_out[rel] = (
                            f"{info.st_size / MB:.1f} MB, over checkpoints.max_file_mb"
                        )
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
