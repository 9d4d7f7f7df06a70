"""The format versions of a home: ``config.yaml``'s ``config_version`` and each
database's schema version, against what this Herald knows.

Read without changing anything (databases are opened read-only), so `herald doctor`
and a restore can say "this home is newer than this Herald" before anything opens
it for writing.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from herald.config.home import HeraldHome
from herald.homes.layout import walk_home
from herald.homes.sqlite_copy import schema_version


def known_versions() -> dict[str, int]:
    """The newest format of each file this Herald writes, by file name."""
    from herald.config.schema import CONFIG_VERSION
    from herald.cron.store import FORMAT_VERSION as CRON_FORMAT
    from herald.kanban.sqlite_board import FORMAT_VERSION as BOARD_FORMAT
    from herald.memory.holographic.schema import LATEST_VERSION as FACTS_VERSION
    from herald.state.schema import LATEST_VERSION as STATE_VERSION

    return {
        "config": CONFIG_VERSION,
        "state.db": STATE_VERSION,
        "cron.db": CRON_FORMAT,
        "kanban.db": BOARD_FORMAT,
        "facts.db": FACTS_VERSION,
    }


def _kind(name: str) -> str:
    return name if name == "config" else Path(name).name


def newer_than_this_herald(versions: dict[str, int]) -> list[str]:
    """The entries of `versions` (path -> version) this Herald cannot read, described."""
    known = known_versions()
    out = []
    for name, found in sorted(versions.items()):
        newest = known.get(_kind(name))
        if newest is not None and int(found) > newest:
            out.append(f"{name} version {found} (this Herald knows up to {newest})")
    return out


@dataclass(frozen=True)
class VersionCheck:
    name: str
    found: int | None
    newest: int | None
    status: str  # current | older | newer | unreadable | unknown
    detail: str = ""


def read_db_version(path: Path) -> int:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None, timeout=10)
    try:
        return schema_version(conn)
    finally:
        conn.close()


def inspect_home(home: HeraldHome) -> list[VersionCheck]:
    """Each versioned file of the home with its version and a verdict."""
    from herald.config.loader import ConfigError, read_raw

    known = known_versions()
    checks: list[VersionCheck] = []
    try:
        raw = read_raw(home.config_path)
        found = raw.get("config_version", known["config"])
        checks.append(_verdict("config.yaml", found, known["config"]))
    except ConfigError as exc:
        checks.append(VersionCheck("config.yaml", None, known["config"], "unreadable", str(exc)))
    entries, _ = walk_home(home.root, include_secrets=False)
    for entry in entries:
        if entry.kind != "sqlite":
            continue
        newest = known.get(Path(entry.rel).name)
        try:
            version = read_db_version(home.root / entry.rel)
        except sqlite3.Error as exc:
            checks.append(VersionCheck(entry.rel, None, newest, "unreadable", str(exc)))
            continue
        if newest is None:
            checks.append(VersionCheck(entry.rel, version, None, "unknown"))
        else:
            checks.append(_verdict(entry.rel, version, newest))
    return checks


def _verdict(name: str, found: object, newest: int) -> VersionCheck:
    if not isinstance(found, int) or isinstance(found, bool):
        return VersionCheck(name, None, newest, "unreadable", f"version {found!r} is not a number")
    if found > newest:
        return VersionCheck(
            name, found, newest, "newer",
            f"written by a newer Herald (version {found}, this Herald knows up to {newest}): "
            "upgrade Herald; this one will not open it",
        )  # fmt: skip
    # 0 is a fresh state.db, but a cron.db or kanban.db from before they were versioned
    if found < newest and (found != 0 or Path(name).name in ("cron.db", "kanban.db")):
        return VersionCheck(
            name, found, newest, "older",
            f"version {found}; migrated to {newest} the next time Herald opens it "
            "(a copy is kept under backups/pre-…)",
        )  # fmt: skip
    return VersionCheck(name, found, newest, "current")
