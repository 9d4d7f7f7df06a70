"""Homes with something in them, and a digest that says whether one changed."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

from herald.config import HeraldHome, load_settings
from herald.testing.homes import make_home


def populate(root: Path) -> HeraldHome:
    """A home with a session, a cron job, a board task, a skill, a memory and secrets,
    each written through the store that owns it."""
    from herald.cron import CronStore, JobSpec, add_job
    from herald.kanban.model import NewTask
    from herald.kanban.sqlite_board import SqliteBoard
    from herald.state import StateStore

    make_home(
        root,
        {"model": {"provider": "openai", "name": "fake-gpt"}},
        {"OPENAI_API_KEY": "sk-test-secret"},
    )
    home = HeraldHome(root)
    with StateStore(home.state_db) as store:
        sid = store.create_session(title="Tomato planning")
        store.append_message(sid, {"role": "user", "content": "when do I plant tomatoes?"})
        store.append_message(sid, {"role": "assistant", "content": "after the last frost"})
    settings = load_settings()
    with CronStore.for_home(home) as cron:
        add_job(
            settings, cron, "morning", JobSpec(schedule="every 1h", prompt="news"), created_by="cli"
        )
    board = SqliteBoard(root / "kanban.db")
    board.add(NewTask(title="water the tomatoes"))
    board.close()
    skill = home.skills_dir / "garden"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: garden\ndescription: gardening notes\n---\nWater in the morning.\n"
    )
    (home.memories_dir / "MEMORY.md").write_text(
        "The user grows tomatoes\n§\nThe user lives in Lyon\n"
    )
    return home


def tree_digest(root: Path, *, skip: tuple[str, ...] = ("backups",)) -> dict[str, str]:
    """Every regular file under `root` (but `skip`) with its hash; databases by their
    logical content (a dump), since WAL checkpoints may move bytes between files."""
    out: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if rel.split("/")[0] in skip or path.is_dir() or path.is_symlink():
            continue
        if rel.endswith(("-wal", "-shm", "-journal")):
            continue
        data = path.read_bytes()
        if data.startswith(b"SQLite format 3\x00"):
            conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
            data = "\n".join(conn.iterdump()).encode()
            conn.close()
        out[rel] = hashlib.sha256(data).hexdigest()
    return out
