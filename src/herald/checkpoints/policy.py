"""Which workdirs get checkpoints, and whether a checkpoint covers given paths.

A workdir that is `/`, the user's home directory or an ancestor of it, that contains
Herald's own home, that is not a directory, or that the user does not own gets no
checkpoint: snapshotting it would copy a whole account (and Herald's secrets) into
the shadow repository, and restoring it could rewrite files that are not the
project's. The reason is returned so the caller can say it once.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from herald.checkpoints.git import GitError
from herald.checkpoints.scan import DOT_GIT
from herald.checkpoints.store import CheckpointError, CheckpointStore


def workdir_refusal(
    workdir: str | Path, herald_home: Path, user_home: Path | None = None
) -> str | None:
    """Why `workdir` gets no checkpoints, or None when it may have them."""
    path = Path(os.path.realpath(workdir))
    home = Path(os.path.realpath(user_home if user_home is not None else Path.home()))
    herald = Path(os.path.realpath(herald_home))
    if not path.is_dir():
        return f"{path} is not a directory"
    if path == Path(path.anchor):
        return f"{path} is the filesystem root"
    if path == home:
        return f"{path} is your home directory"
    if path in home.parents:
        return f"{path} contains your home directory"
    if path == herald or path in herald.parents:
        return f"{path} contains Herald's home ({herald})"
    if hasattr(os, "geteuid") and path.stat().st_uid != os.geteuid():
        return f"{path} is not owned by you"
    return None


def covers(store: CheckpointStore, paths: Iterable[str]) -> bool:
    """Whether the newest checkpoint of `store.workdir` holds every one of `paths`
    (absolute, or relative to the workdir) and everything below them, so a command
    that deletes or rewrites them can be undone.

    False when there is no checkpoint, when a path is outside the workdir, and when
    the size limits or a nested repository left out anything at, under or above a
    path (`rm -rf .` with one large file left out is not covered). A path that does
    not exist yet is covered (a restore with --clean removes what a command creates).
    The caller takes the checkpoint first (`CheckpointService.before_change`); this
    only reads the newest one."""
    try:
        newest = store.newest()
    except (CheckpointError, GitError, OSError):
        return False  # an answer we cannot get relaxes nothing
    if newest is None:
        return False
    root = store.workdir
    left_out = list(newest.left_out)
    if not newest.has_git_dir and (root / DOT_GIT).exists():
        left_out.append(DOT_GIT)
    for raw in paths:
        absolute = Path(os.path.normpath(root / os.path.expanduser(raw)))
        try:
            rel = absolute.relative_to(root).as_posix()
        except ValueError:
            return False
        for out in left_out:
            if rel == "." or rel == out or out.startswith(rel + "/") or rel.startswith(out + "/"):
                return False
    return True
