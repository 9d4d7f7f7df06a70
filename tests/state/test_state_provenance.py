"""Every message row keeps its provenance (migration 7): stored, read back, immutable,
and derived for rows written before it existed."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from tests.state.test_state_schema import build_v1

from herald.state import StateStore


def test_provenance_round_trips_and_defaults_by_role(tmp_path: Path) -> None:
    with StateStore(tmp_path / "state.db") as store:
        sid = store.create_session()
        store.append_messages(
            sid,
            [
                {"role": "user", "content": "fetch the page"},
                {"role": "assistant", "content": None, "tool_calls": []},
                {
                    "role": "tool",
                    "content": "page text",
                    "tool_call_id": "c1",
                    "provenance": "untrusted:web:http://x.invalid/",
                },
            ],
        )
        rows = store.get_messages(sid)
        assert [r.provenance for r in rows] == [
            "owner",
            "trusted",
            "untrusted:web:http://x.invalid/",
        ]
        assert rows[2].to_message().provenance == "untrusted:web:http://x.invalid/"
        # The engine's message value writes it back unchanged.
        assert rows[2].to_message().to_store()["provenance"] == "untrusted:web:http://x.invalid/"


def test_a_made_up_provenance_is_refused(tmp_path: Path) -> None:
    with StateStore(tmp_path / "state.db") as store:
        sid = store.create_session()
        with pytest.raises(ValueError, match="provenance must be"):
            store.append_message(
                sid, {"role": "tool", "content": "x", "tool_call_id": "c", "provenance": "mine"}
            )


def test_provenance_cannot_be_rewritten(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    with StateStore(path) as store:
        sid = store.create_session()
        store.append_message(
            sid,
            {
                "role": "tool",
                "content": "x",
                "tool_call_id": "c",
                "provenance": "untrusted:mcp:mail",
            },
        )
    conn = sqlite3.connect(path)
    with pytest.raises(sqlite3.DatabaseError, match="provenance cannot change"):
        conn.execute("UPDATE messages SET provenance = 'owner'")
    conn.close()


def test_old_rows_get_a_provenance_from_their_role_and_identity(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    build_v1(path)
    with StateStore(path) as store:
        rows = store.get_messages("20240101-000000-abcdef")
        assert [(r.role, r.provenance) for r in rows] == [
            ("user", "owner"),
            ("assistant", "trusted"),
        ]
