"""The MCP server is the owner's: it lists, searches and reads the owner's sessions and
USER.md, never another identity's (issue 29)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from herald.mcp.server.reading import HeraldReader
from herald.memory import BuiltinMemory
from herald.state import StateStore
from herald.testing.homes import make_home
from herald.tools import ToolArgumentError


def test_mcp_sees_only_the_owners_sessions_and_user_md(tmp_path: Path) -> None:
    settings = make_home(tmp_path / "home", {})
    with StateStore(settings.home.state_db) as store:
        danas = store.create_session(source="telegram", identity="dana", title="dana's secret")
        store.append_message(danas, {"role": "user", "content": "my locker code is 5512 tulip"})
        mine = store.create_session(source="cli", title="owner's chat")
        store.append_message(mine, {"role": "user", "content": "tulip bulbs for spring"})
        BuiltinMemory(settings.home, identity="dana").add("user", "Dana's locker: 5512")
        reader = HeraldReader(settings, store)
        assert [s["id"] for s in json.loads(reader.sessions_list())] == [mine]
        found = json.loads(reader.session_search("tulip"))
        assert [r["session_id"] for r in found["results"]] == [mine]
        with pytest.raises(ToolArgumentError):
            reader.session_read(danas)
        assert "5512" not in reader.memory_read("USER")
