"""Sessions and messages belong to an identity (issue 29); an existing home's history
stays the owner's after the migration."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from test_state_schema import build_v1

from herald.state import StateStore


def test_an_old_homes_sessions_and_messages_become_the_owners(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    build_v1(path)
    with StateStore(path) as store:
        (old,) = store.list_sessions()
        assert old.identity == "owner"
        assert [s.id for s in store.list_sessions(identity="owner")] == [old.id]
        assert store.list_sessions(identity="dana") == []
    conn = sqlite3.connect(path)
    assert {row[0] for row in conn.execute("SELECT identity FROM messages")} == {"owner"}
    conn.close()


def test_a_sessions_messages_carry_its_identity(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    with StateStore(path) as store:
        dana = store.create_session(source="telegram", identity="dana")
        mine = store.create_session(source="cli")
        store.append_message(dana, {"role": "user", "content": "dana's words"})
        store.append_message(mine, {"role": "user", "content": "owner's words"})
        assert store.get_session(dana).identity == "dana"  # type: ignore[union-attr]
        assert [s.id for s in store.list_sessions(identity="dana")] == [dana]
    conn = sqlite3.connect(path)
    rows = dict(conn.execute("SELECT content, identity FROM messages").fetchall())
    conn.close()
    assert rows == {"dana's words": "dana", "owner's words": "owner"}
