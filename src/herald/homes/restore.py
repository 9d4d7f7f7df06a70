"""`restore_backup`: put a verified backup into a home (empty, or existing after that
home has itself been backed up).

Nothing is written outside the home: every path in the manifest is checked to be
relative and free of ``..``, files are staged inside the home and moved into place
through directory descriptors opened with ``O_NOFOLLOW``, and a symlink standing
where a restored file would go stops the restore before anything moves.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from herald.config.home import HeraldHome
from herald.homes.backup import (
    FILES_DIR,
    NAME_PREFIX,
    BackupError,
    backups_dir,
    create_backup,
    default_name,
    sweep_stale,
    verify_backup,
)
from herald.homes.layout import (
    SQLITE_COMPANIONS,
    STAGING_PREFIX,
    no_symlink_between,
    open_inside,
    safe_relative,
    walk_home,
)
from herald.homes.versions import newer_than_this_herald


@dataclass
class RestoreReport:
    restored: int = 0
    removed: list[str] = field(default_factory=list)
    safety_backup: Path | None = None


def _gateway_pid(home: HeraldHome) -> int | None:
    from herald.state.run_files import RunFiles

    return RunFiles(home).running_pid()


def _parent_fd(root: Path, rel: str) -> tuple[int, str]:
    """An fd of the directory that will hold `root/rel` (made if missing, never through
    a symlink) and the file's own name."""
    parts = safe_relative(rel).parts
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for part in parts[:-1]:
            with contextlib.suppress(FileExistsError):
                os.mkdir(part, 0o700, dir_fd=fd)
            nxt = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise
    return fd, parts[-1]


def _stage(source_root: Path, staging: Path, rel: str) -> None:
    fd = open_inside(staging, rel, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as out, open(source_root / rel, "rb") as src:
        shutil.copyfileobj(src, out, 1 << 20)
        out.flush()
        os.fsync(out.fileno())


def restore_backup(backup: Path, home: HeraldHome, *, progress=None) -> RestoreReport:
    say = progress or (lambda _text: None)
    verdict = verify_backup(backup)
    if not verdict.ok or verdict.manifest is None:
        raise BackupError(
            f"{backup} did not verify; nothing was restored:\n  " + "\n  ".join(verdict.problems)
        )
    manifest = verdict.manifest
    too_new = newer_than_this_herald(manifest.versions)
    if too_new:
        raise BackupError(
            f"{backup} holds {', '.join(too_new)}, newer than this Herald understands: "
            "upgrade Herald, then restore (nothing was restored)"
        )
    pid = _gateway_pid(home)
    if pid is not None:
        raise BackupError(
            f"a gateway (pid {pid}) is running on {home.root}: stop it "
            "(herald gateway stop) and restore again"
        )
    root = home.root
    root.mkdir(parents=True, exist_ok=True)
    files = [str(r["path"]) for r in manifest.files]
    blocked = [rel for rel in files if not no_symlink_between(root, rel)]
    if blocked:
        raise BackupError(
            "a symlink in the home stands where the backup would write "
            f"({', '.join(blocked[:5])}): remove it and restore again (nothing was restored)"
        )
    report = RestoreReport()
    current, _ = walk_home(root, include_secrets=bool(manifest.data.get("include_secrets")))
    if any(entry.size > 0 for entry in current):  # not a fresh, empty home
        report.safety_backup = backups_dir(home) / f"{default_name()}-before-restore"
        say(f"backing up the current home to {report.safety_backup}")
        create_backup(
            home,
            report.safety_backup,
            include_secrets=bool(manifest.data.get("include_secrets")),
        )
    sweep_stale(root)
    staging = root / f"{STAGING_PREFIX}restore-{backup.name}-{os.getpid()}"
    staging.mkdir()
    try:
        source_root = backup.expanduser().absolute() / FILES_DIR
        for rel in files:
            _stage(source_root, staging, rel)
        kinds = {str(r["path"]): r.get("kind") for r in manifest.files}
        for rel in files:
            fd, name = _parent_fd(root, rel)
            try:
                if kinds[rel] == "sqlite":  # a stale WAL would be replayed onto the new file
                    for suffix in SQLITE_COMPANIONS:
                        with contextlib.suppress(FileNotFoundError):
                            os.unlink(name + suffix, dir_fd=fd)
                os.replace(staging / rel, name, dst_dir_fd=fd)
                os.fsync(fd)
            finally:
                os.close(fd)
            report.restored += 1
        wanted = set(files)
        for entry in current:
            if entry.rel not in wanted and no_symlink_between(root, entry.rel):
                (root / entry.rel).unlink(missing_ok=True)
                report.removed.append(entry.rel)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    say(f"restored {report.restored} files from {backup}")
    return report


__all__ = ["NAME_PREFIX", "RestoreReport", "restore_backup"]
