"""What the Matrix adapter keeps on disk, under ``<home>/matrix/`` (or `store_dir`):

- ``store.db`` (SQLite through ``mautrix.util.async_db``): mautrix's room state store
  (members, whether a room is encrypted) and its crypto store (`PgCryptoStore`: the Olm
  account, Olm and Megolm sessions, device lists), the Olm pickles encrypted with
  ``pickle.key``; one database, because the crypto store reads the member tables;
- ``sync.json``: the sync token, written only after every event of a sync response was
  recorded in the inbound ledger, and the device the stores belong to.

All of it is mode 0600 in a 0700 folder: the crypto store holds the keys that read
every encrypted room Herald is in.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


@dataclass
class SyncPosition:
    """The sync token and the device it belongs to (`sync.json`)."""

    path: Path
    next_batch: str | None = None
    device_id: str | None = None

    @classmethod
    def load(cls, folder: Path) -> SyncPosition:
        path = folder / "sync.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return cls(path)
        return cls(path, data.get("next_batch") or None, data.get("device_id") or None)

    def save(self) -> None:
        body = json.dumps({"next_batch": self.next_batch, "device_id": self.device_id})
        tmp = self.path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(body)
        os.replace(tmp, self.path)


def prepare_folder(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    os.chmod(folder, 0o700)
    return folder


def pickle_key(folder: Path) -> str:
    """The key the crypto store's Olm pickles are encrypted with, made once."""
    path = folder / "pickle.key"
    if path.exists():
        return path.read_text(encoding="utf-8").strip()
    key = secrets.token_urlsafe(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(key)
    return key


async def open_database(path: Path, upgrade_table: Any) -> Any:
    from mautrix.util.async_db import Database

    database = Database.create(f"sqlite:///{path}", upgrade_table=upgrade_table)
    await database.start()
    os.chmod(path, 0o600)
    return database


__all__ = ["SyncPosition", "open_database", "pickle_key", "prepare_folder"]
