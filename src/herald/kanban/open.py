"""Open the board a home's config points at, and name who is using it."""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import TYPE_CHECKING

from herald.kanban.board import Board
from herald.kanban.model import ClaimOwner, KanbanError

if TYPE_CHECKING:
    from herald.config import HeraldConfig, HeraldHome, Secrets


def base_root(home: HeraldHome) -> Path:
    """The base home of `home` (a profile lives in <base>/profiles/<name>)."""
    return home.root.parent.parent if home.profile else home.root


def sqlite_path(config: HeraldConfig, home: HeraldHome) -> Path:
    raw = config.kanban.path
    if raw is None:
        return base_root(home) / "kanban.db"
    path = Path(raw).expanduser()
    return path if path.is_absolute() else base_root(home) / path


def open_board(config: HeraldConfig, home: HeraldHome, secrets: Secrets | None) -> Board:
    """The configured board. Raises `KanbanError` saying what to fix when it cannot open."""
    section = config.kanban
    if section.backend == "postgres":
        from herald.kanban.postgres_board import PostgresBoard

        name = section.dsn_secret
        dsn = secrets.get(name) if secrets is not None else None
        if not dsn:
            where = f" or in {secrets.env_file}" if secrets and secrets.env_file else ""
            raise KanbanError(
                f"kanban.backend is postgres but the secret {name} (kanban.dsn) is not set: "
                f"set {name} to the board's postgresql:// URL (user, password, host, database) "
                f"in the environment{where}"
            )
        return PostgresBoard(dsn, max_attempts=section.max_attempts)
    from herald.kanban.sqlite_board import SqliteBoard

    return SqliteBoard(sqlite_path(config, home), max_attempts=section.max_attempts)


def host_name(config: HeraldConfig) -> str:
    return config.kanban.host_name or socket.gethostname()


def process_owner(config: HeraldConfig, role: str) -> ClaimOwner:
    """This process as a claimer: ``role@host:pid``."""
    host = host_name(config)
    pid = os.getpid()
    return ClaimOwner(name=f"{role}@{host}:{pid}", host=host, pid=pid)
