"""tar.gz snapshots of a home's ``skills/`` directory, and safe restores.

A snapshot holds everything under ``skills/`` (skills, the archive, the usage
sidecar) except the snapshots themselves and lock files. Restoring checks
every member first — regular files and directories only, relative paths
without ``..``, a bounded total size — and refuses the whole snapshot if one
member fails, then swaps the extracted tree in. Callers hold the library lock.
"""

from __future__ import annotations

import re
import shutil
import tarfile
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

SNAPSHOT_DIR = ".snapshots"
SUFFIX = ".tar.gz"
BEFORE_ROLLBACK = "before-rollback"
MAX_RESTORE_BYTES = 1 << 30
_NAME_RE = re.compile(
    r"^(?P<stamp>\d{8}T\d{6}Z)(?:-(?P<n>\d+))?(?:-(?P<kind>before-rollback))?\.tar\.gz$"
)
_SKIPPED_SUFFIXES = (".lock", ".tmp")


class SnapshotError(ValueError):
    """A snapshot that is missing, unreadable or unsafe to extract."""


@dataclass(frozen=True)
class Snapshot:
    path: Path
    stamp: str
    sequence: int
    before_rollback: bool

    @property
    def name(self) -> str:
        return self.path.name


def _parse(path: Path) -> Snapshot | None:
    match = _NAME_RE.match(path.name)
    if match is None or not path.is_file():
        return None
    return Snapshot(
        path, match.group("stamp"), int(match.group("n") or 1), bool(match.group("kind"))
    )


def list_snapshots(skills_dir: Path, *, before_rollback: bool | None = None) -> list[Snapshot]:
    """Snapshots oldest first; `before_rollback` filters by kind (None: both)."""
    folder = skills_dir / SNAPSHOT_DIR
    if not folder.is_dir():
        return []
    found = [s for s in (_parse(p) for p in folder.iterdir()) if s is not None]
    if before_rollback is not None:
        found = [s for s in found if s.before_rollback == before_rollback]
    return sorted(found, key=lambda s: (s.stamp, s.sequence, s.path.name))


def _skip(relative: PurePosixPath) -> bool:
    top = relative.parts[0]
    return (
        top == SNAPSHOT_DIR
        or top.startswith(".restore-")
        or relative.name.endswith(_SKIPPED_SUFFIXES)
    )


def create_snapshot(skills_dir: Path, when: float, *, before_rollback: bool = False) -> Path:
    """Write ``skills/.snapshots/<UTC stamp>[-n][-before-rollback].tar.gz``."""
    folder = skills_dir / SNAPSHOT_DIR
    folder.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(when))
    kind = f"-{BEFORE_ROLLBACK}" if before_rollback else ""
    target = folder / f"{stamp}{kind}{SUFFIX}"
    n = 1
    while target.exists():
        n += 1
        target = folder / f"{stamp}-{n}{kind}{SUFFIX}"
    fd, tmp_name = tempfile.mkstemp(prefix=".snapshot-", suffix=".tmp", dir=folder)
    tmp = Path(tmp_name)
    try:
        with open(fd, "wb") as raw, tarfile.open(fileobj=raw, mode="w:gz") as tar:
            for path in sorted(skills_dir.rglob("*")):
                relative = PurePosixPath(path.relative_to(skills_dir).as_posix())
                if _skip(relative) or path.is_symlink():
                    continue
                if path.is_dir() or path.is_file():
                    tar.add(str(path), arcname=str(relative), recursive=False)
        tmp.replace(target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return target


def prune_snapshots(skills_dir: Path, keep: int) -> list[Path]:
    """Delete all but the newest `keep` snapshots of each kind; returns the removed."""
    removed: list[Path] = []
    for kind in (False, True):
        found = list_snapshots(skills_dir, before_rollback=kind)
        for snapshot in found[: max(0, len(found) - keep)]:
            snapshot.path.unlink(missing_ok=True)
            removed.append(snapshot.path)
    return removed


def _checked_members(tar: tarfile.TarFile) -> list[tuple[tarfile.TarInfo, PurePosixPath]]:
    members: list[tuple[tarfile.TarInfo, PurePosixPath]] = []
    total = 0
    for member in tar.getmembers():
        name = member.name
        pure = PurePosixPath(name)
        if (
            not name
            or pure.is_absolute()
            or name.startswith(("/", "\\"))
            or ".." in pure.parts
            or "\\" in name
            or (len(name) > 1 and name[1] == ":")
        ):
            raise SnapshotError(f"unsafe path {name!r} in the snapshot; nothing was restored")
        if not (member.isfile() or member.isdir()):
            raise SnapshotError(
                f"{name!r} in the snapshot is a link or special file; nothing was restored"
            )
        if pure.parts and pure.parts[0] == SNAPSHOT_DIR:
            continue
        total += max(0, member.size)
        if total > MAX_RESTORE_BYTES:
            raise SnapshotError("the snapshot is implausibly large; nothing was restored")
        members.append((member, pure))
    return members


def check_snapshot(path: Path) -> None:
    """Raise SnapshotError unless `path` is a readable snapshot safe to restore."""
    try:
        with tarfile.open(path, mode="r:gz") as tar:
            _checked_members(tar)
    except (OSError, tarfile.TarError, EOFError) as exc:
        raise SnapshotError(f"cannot read snapshot {path.name}: {exc}") from None


def _extract(path: Path, dest: Path) -> None:
    with tarfile.open(path, mode="r:gz") as tar:
        for member, pure in _checked_members(tar):
            target = dest.joinpath(*pure.parts)
            if member.isdir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            source = tar.extractfile(member)
            if source is None:
                raise SnapshotError(f"cannot read {member.name!r} from the snapshot")
            with source, open(target, "wb") as out:
                shutil.copyfileobj(source, out)


def restore_snapshot(skills_dir: Path, path: Path) -> None:
    """Replace the contents of `skills_dir` (snapshots and locks excepted) with the
    snapshot at `path`. Extraction happens aside first, so a bad snapshot leaves the
    library untouched."""
    staging = Path(tempfile.mkdtemp(prefix=".restore-", dir=skills_dir))
    try:
        _extract(path, staging)
    except (OSError, tarfile.TarError, EOFError) as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise SnapshotError(f"cannot read snapshot {path.name}: {exc}") from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    old = Path(tempfile.mkdtemp(prefix=".restore-old-", dir=skills_dir))
    try:
        for entry in list(skills_dir.iterdir()):
            if entry in (staging, old) or _skip(PurePosixPath(entry.name)):
                continue
            shutil.move(str(entry), str(old / entry.name))
        for entry in list(staging.iterdir()):
            shutil.move(str(entry), str(skills_dir / entry.name))
    except OSError as exc:
        # Keep the previous contents: they are the only copy not yet in place.
        raise SnapshotError(
            f"restore failed half-way ({exc}); the previous skills are kept in {old}"
        ) from exc
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    shutil.rmtree(old, ignore_errors=True)
