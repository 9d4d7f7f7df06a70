"""`create_backup`, `verify_backup`, `list_backups`: a home as one directory with a
manifest (versions, file hashes, counts), made while the gateway runs.

A backup is written into a staging directory beside its final name and renamed into
place only once every file and the manifest are on disk, so a backup that exists is
complete, and a create killed at any point leaves the home as it was (it only reads
the home) plus a staging directory that the next create or list removes.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from herald import __version__
from herald.config.home import HeraldHome
from herald.environments.processes import pid_alive
from herald.homes.layout import STAGING_PREFIX, Skipped, open_inside, safe_relative, walk_home
from herald.homes.sqlite_copy import describe, online_copy
from herald.memory.entries import parse_entries

FORMAT = "herald-backup"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
FILES_DIR = "files"
NAME_PREFIX = "herald-backup-"
_CHUNK = 1 << 20
_STAGING_RE = re.compile(rf"^{re.escape(STAGING_PREFIX)}(?:partial|restore)-.*-(\d+)$")


class BackupError(RuntimeError):
    """A backup that cannot be made, read or trusted; the message says what to do."""


@dataclass
class Manifest:
    data: dict[str, Any]

    @property
    def files(self) -> list[dict[str, Any]]:
        return list(self.data.get("files", []))

    @property
    def versions(self) -> dict[str, int]:
        return dict(self.data.get("versions", {}))

    @property
    def counts(self) -> dict[str, int]:
        return dict(self.data.get("counts", {}))


@dataclass
class VerifyReport:
    path: Path
    problems: list[str] = field(default_factory=list)
    manifest: Manifest | None = None

    @property
    def ok(self) -> bool:
        return not self.problems


def backups_dir(home: HeraldHome) -> Path:
    return home.root / "backups"


def default_name(now: float | None = None) -> str:
    return NAME_PREFIX + time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(now or time.time()))


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _copy_file(source: Path, dest: Path) -> None:
    fd = os.open(source, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as src, open(dest, "wb") as out:
        shutil.copyfileobj(src, out, _CHUNK)
        out.flush()
        os.fsync(out.fileno())
    shutil.copymode(source, dest, follow_symlinks=False)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def sweep_stale(directory: Path) -> list[Path]:
    """Remove staging directories left by a killed create or restore (their pid is dead)."""
    removed: list[Path] = []
    with contextlib.suppress(OSError):
        for child in directory.iterdir():
            match = _STAGING_RE.match(child.name)
            stale = match and not pid_alive(int(match.group(1)))
            if stale and child.is_dir() and not child.is_symlink():
                shutil.rmtree(child, ignore_errors=True)
                removed.append(child)
    return removed


def _memory_entries(root: Path) -> int:
    total = 0
    for path in sorted((root / "memories").rglob("*.md")):
        if path.is_file() and not path.is_symlink():
            with contextlib.suppress(OSError, UnicodeDecodeError):
                total += len(parse_entries(path.read_text(encoding="utf-8")))
    return total


def _config_version(root: Path) -> int:
    from herald.config.loader import ConfigError, read_raw
    from herald.config.schema import CONFIG_VERSION

    try:
        raw = read_raw(root / "config.yaml")
    except ConfigError:
        return CONFIG_VERSION
    value = raw.get("config_version", CONFIG_VERSION)
    return value if isinstance(value, int) else CONFIG_VERSION


def resolve_target(home: HeraldHome, path: Path | None) -> Path:
    """Where a new backup goes: PATH itself, a new name inside PATH when it is an
    existing directory, or ``<home>/backups/<name>`` without PATH."""
    if path is not None:
        path = path.expanduser().absolute()
        if not path.is_dir() or (path / MANIFEST).exists():
            return path
    folder = path if path is not None else backups_dir(home)
    name = default_name()
    target, n = folder / name, 1
    while target.exists():  # two backups in one second (a scheduled one and yours)
        target, n = folder / f"{name}-{n}", n + 1
    return target


def create_backup(
    home: HeraldHome,
    target: Path,
    *,
    include_secrets: bool = False,
    progress: Any = None,
) -> Manifest:
    """Back up `home` into the new directory `target`. `progress(text)` hears each step."""
    root = home.root.resolve()
    target = target.absolute()
    if target.exists():
        raise BackupError(f"{target} already exists: choose a new name for the backup")
    with contextlib.suppress(ValueError):
        rel = target.resolve().relative_to(root)
        if rel.parts[:1] != ("backups",):
            raise BackupError(
                f"{target} is inside the home but not under {root / 'backups'}: "
                "put backups there or outside the home"
            )
    target.parent.mkdir(parents=True, exist_ok=True)
    sweep_stale(target.parent)
    staging = target.parent / f"{STAGING_PREFIX}partial-{target.name}-{os.getpid()}"
    (staging / FILES_DIR).mkdir(parents=True)
    say = progress or (lambda _text: None)
    try:
        manifest = _fill(root, staging, include_secrets=include_secrets, say=say)
        _write_manifest(staging, manifest)
        _fsync_dir(staging)
        os.rename(staging, target)
        _fsync_dir(target.parent)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return manifest


def _fill(root: Path, staging: Path, *, include_secrets: bool, say: Any) -> Manifest:
    entries, skipped = walk_home(root, include_secrets=include_secrets)
    files_root = staging / FILES_DIR
    records: list[dict[str, Any]] = []
    versions: dict[str, int] = {"config": _config_version(root)}
    counts: dict[str, int] = {}
    for entry in entries:
        source = root / entry.rel
        dest = files_root / entry.rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        try:
            if entry.kind == "sqlite":
                say(f"copying {entry.rel} (online backup)")
                online_copy(source, dest)
                version, db_counts, verdict = describe(dest)
                if verdict != "ok":
                    raise BackupError(f"{entry.rel} failed its integrity check: {verdict}")
                versions[entry.rel] = version
                for key, value in db_counts.items():
                    counts[key] = counts.get(key, 0) + value
            else:
                _copy_file(source, dest)
        except FileNotFoundError:  # removed while we walked (a rotated temp file)
            skipped.append(Skipped(entry.rel, "vanished during the backup"))
            continue
        except OSError as exc:
            raise BackupError(f"cannot copy {source}: {exc.strerror or exc}") from exc
        records.append(
            {"path": entry.rel, "kind": entry.kind, "size": dest.stat().st_size,
             "sha256": _sha256(dest)}
        )  # fmt: skip
    counts["skills"] = sum(1 for r in records if r["path"].endswith("/SKILL.md")
                           and r["path"].startswith("skills/"))  # fmt: skip
    counts["memory_entries"] = _memory_entries(root)
    data = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "herald_version": __version__,
        "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "home": str(root),
        "include_secrets": include_secrets,
        "versions": versions,
        "counts": counts,
        "files": records,
        "skipped": [{"path": s.rel, "reason": s.reason} for s in skipped],
    }
    return Manifest(data)


def _write_manifest(staging: Path, manifest: Manifest) -> None:
    fd = open_inside(staging, MANIFEST, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(manifest.data, fh, indent=2, sort_keys=True)
        fh.write("\n")
        fh.flush()
        os.fsync(fh.fileno())


def read_manifest(path: Path) -> Manifest:
    manifest_path = path / MANIFEST
    try:
        data = json.loads(manifest_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BackupError(f"{path} is not a Herald backup (no {MANIFEST})") from None
    except (OSError, ValueError) as exc:
        raise BackupError(f"{manifest_path} cannot be read: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise BackupError(f"{manifest_path} is not a Herald backup manifest")
    if int(data.get("format_version", 0)) > FORMAT_VERSION:
        raise BackupError(
            f"{path} was written by a newer Herald (backup format "
            f"{data.get('format_version')}, this Herald reads up to {FORMAT_VERSION}): "
            "upgrade Herald to use it"
        )
    return Manifest(data)


def verify_backup(path: Path) -> VerifyReport:
    """Every file present with its recorded hash, no extra files, databases intact."""
    path = path.expanduser().absolute()
    report = VerifyReport(path)
    try:
        manifest = read_manifest(path)
    except BackupError as exc:
        report.problems.append(str(exc))
        return report
    report.manifest = manifest
    files_root = path / FILES_DIR
    listed: set[str] = set()
    for record in manifest.files:
        rel = str(record.get("path", ""))
        try:
            safe_relative(rel)
        except ValueError as exc:
            report.problems.append(str(exc))
            continue
        listed.add(rel)
        file = files_root / rel
        if file.is_symlink() or not file.is_file():
            report.problems.append(f"{rel}: missing from the backup")
            continue
        if _sha256(file) != record.get("sha256"):
            report.problems.append(f"{rel}: contents differ from the manifest (damaged)")
            continue
        if record.get("kind") == "sqlite":
            verdict = describe(file)[2]
            if verdict != "ok":
                report.problems.append(f"{rel}: database integrity check failed: {verdict}")
    for extra in sorted(p for p in files_root.rglob("*") if not p.is_dir()):
        rel = extra.relative_to(files_root).as_posix()
        if rel not in listed:
            report.problems.append(f"{rel}: in the backup but not in its manifest")
    return report


def list_backups(home: HeraldHome) -> list[tuple[Path, Manifest | None, str]]:
    """(path, manifest or None, note) for each backup under ``<home>/backups``, oldest first."""
    directory = backups_dir(home)
    sweep_stale(directory)
    out: list[tuple[Path, Manifest | None, str]] = []
    if not directory.is_dir():
        return out
    for child in sorted(directory.iterdir()):
        if not child.is_dir() or child.is_symlink() or child.name.startswith(STAGING_PREFIX):
            continue
        if not (child / MANIFEST).exists():
            continue  # a pre-migration copy or someone else's folder
        try:
            out.append((child, read_manifest(child), ""))
        except BackupError as exc:
            out.append((child, None, str(exc)))
    return out


def prune_backups(home: HeraldHome, keep: int) -> list[Path]:
    """Remove the oldest named backups beyond `keep` (only ones this Herald made)."""
    made = [p for p, m, _ in list_backups(home) if m is not None and p.name.startswith(NAME_PREFIX)]
    doomed = made[: max(0, len(made) - keep)]
    for path in doomed:
        shutil.rmtree(path)
    return doomed
