"""File helpers for the skill library: the library lock, and
resolving a file the model names inside a skill without escaping it."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from filelock import FileLock

LOCK_FILE = ".lock"
LOCK_TIMEOUT_SECONDS = 10.0
# The skill's own bookkeeping directories; never offered as skill files.
HIDDEN_PREFIX = "."
MAX_LISTED_FILES = 200


def library_lock(skills_dir: Path) -> FileLock:
    """The lock every writer of `skills_dir` holds (skill writes, curator, rollback)."""
    from filelock import FileLock  # ~20 modules: only a process that writes skills needs them

    skills_dir.mkdir(parents=True, exist_ok=True)
    return FileLock(str(skills_dir / LOCK_FILE), timeout=LOCK_TIMEOUT_SECONDS)


class UnsafePathError(ValueError):
    """A relative path that would leave the skill directory."""


def resolve_inside(root: Path, relative: str) -> Path:
    """`root / relative`, refusing absolute paths, ``..``, hidden parts and symlinks
    that resolve outside `root`."""
    cleaned = relative.strip().replace("\\", "/")
    if not cleaned:
        raise UnsafePathError("the file name is empty")
    pure = PurePosixPath(cleaned)
    if pure.is_absolute() or cleaned.startswith("~") or (len(cleaned) > 1 and cleaned[1] == ":"):
        raise UnsafePathError(
            f"{relative!r} is absolute; name a file relative to the skill, e.g. references/x.md"
        )
    if any(part == ".." for part in pure.parts):
        raise UnsafePathError(f"{relative!r} leaves the skill directory ('..' is not allowed)")
    if any(part.startswith(HIDDEN_PREFIX) for part in pure.parts if part != "."):
        raise UnsafePathError(f"{relative!r} names a hidden file, which skills do not expose")
    real_root = root.resolve()
    target = (root / Path(*pure.parts)).resolve()
    if not target.is_relative_to(real_root):
        raise UnsafePathError(f"{relative!r} points outside the skill directory")
    return target


def list_files(skill_dir: Path, *, limit: int = MAX_LISTED_FILES) -> tuple[str, ...]:
    """Files of a skill other than SKILL.md, as sorted relative POSIX paths."""
    out: list[str] = []
    real_root = skill_dir.resolve()
    for dirpath, dirnames, filenames in os.walk(skill_dir):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(HIDDEN_PREFIX))
        for filename in sorted(filenames):
            if filename.startswith(HIDDEN_PREFIX):
                continue
            full = Path(dirpath) / filename
            if not full.resolve().is_relative_to(real_root):
                continue
            relative = full.relative_to(skill_dir).as_posix()
            if relative != "SKILL.md":
                out.append(relative)
            if len(out) >= limit:
                return tuple(sorted(out))
    return tuple(sorted(out))
