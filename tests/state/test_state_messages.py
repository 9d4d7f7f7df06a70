"""Appending, reading and compacting messages; the append-only guarantee."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from herald.state import StateError, StateStore, StoredMessage

TOOL_CALL = {
    "id": "call_1",
    "type": "function",
    "function": {"name": "read_file", "arguments": '{"path": "a.txt"}'},
}


def conversation(store: StateStore, sid: str, turns: int) -> list[StoredMessage]:
    return store.append_messages(
        sid,
        [
            message
            for n in range(turns)
            for message in (
                {"role": "user", "content": f"question {n}"},
                {"role": "assistant", "content": f"answer {n}"},
            )
        ],
    )


def test_append_assigns_seq_position_and_keeps_order(store: StateStore) -> None:
    sid = store.create_session()
    first = store.append_message(sid, {"role": "system", "content": "You are Herald."})
    rest = conversation(store, sid, 3)
    stored = [first, *rest]
    assert [m.seq for m in stored] == [1, 2, 3, 4, 5, 6, 7]
    positions = [m.position for m in stored]
    assert positions == sorted(positions) and len(set(positions)) == 7
    assert store.get_messages(sid) == stored
    assert store.count_messages(sid) == 7
    other = store.create_session()
    assert store.append_message(other, {"role": "user", "content": "x"}).seq == 1  # per session
    assert store.get_messages("missing") == []


def test_message_fields_round_trip(store: StateStore) -> None:
    sid = store.create_session()
    assistant, tool = store.append_messages(
        sid,
        [
            {"role": "assistant", "content": None, "tool_calls": [TOOL_CALL], "reasoning": "hm"},
            {"role": "tool", "tool_call_id": "call_1", "name": "read_file", "content": "data"},
        ],
    )
    got = store.get_messages(sid)
    assert got == [assistant, tool]
    assert got[0].tool_calls == [TOOL_CALL]
    assert (got[0].content, got[0].reasoning, got[0].active, got[0].compacted) == (
        None,
        "hm",
        True,
        False,
    )
    assert (got[1].tool_call_id, got[1].tool_name) == ("call_1", "read_file")
    assert (
        store.append_message(
            sid, {"role": "tool", "tool_call_id": "c2", "tool_name": "x", "content": ""}
        ).tool_name
        == "x"
    )


def test_to_api_uses_api_content_and_omits_internal_fields(store: StateStore) -> None:
    sid = store.create_session()
    user = store.append_message(
        sid,
        {"role": "user", "content": "what did I say about tea?"},
        api_content="what did I say about tea?\n\n[recalled memory] likes green tea",
    )
    assert user.content == "what did I say about tea?"
    assistant = store.append_message(
        sid, {"role": "assistant", "content": "", "tool_calls": [TOOL_CALL], "reasoning": "think"}
    )
    tool = store.append_message(
        sid,
        {
            "role": "tool",
            "tool_call_id": "call_1",
            "name": "read_file",
            "content": "ok",
            "api_content": "ok (truncated)",
        },
    )
    same = store.append_message(sid, {"role": "user", "content": "plain"}, api_content="plain")
    reread = {m.id: m for m in store.get_messages(sid)}
    assert reread[user.id].to_api() == {
        "role": "user",
        "content": "what did I say about tea?\n\n[recalled memory] likes green tea",
    }
    assert reread[assistant.id].to_api() == {
        "role": "assistant",
        "content": "",
        "tool_calls": [TOOL_CALL],
    }
    assert reread[tool.id].to_api() == {
        "role": "tool",
        "content": "ok (truncated)",
        "tool_call_id": "call_1",
    }
    assert same.api_content is None  # no sidecar when identical
    assert reread[same.id].to_api() == {"role": "user", "content": "plain"}
    # to_api hands out a copy: mutating it leaves the record alone.
    reread[assistant.id].to_api()["tool_calls"][0]["function"]["name"] = "changed"
    assert reread[assistant.id].tool_calls == [TOOL_CALL]


def test_to_dict_is_json_safe_and_complete(store: StateStore) -> None:
    sid = store.create_session()
    message = store.append_message(
        sid, {"role": "assistant", "content": "x", "tool_calls": [TOOL_CALL]}
    )
    exported = json.loads(json.dumps(message.to_dict()))
    assert exported["id"] == message.id
    assert exported["seq"] == 1
    assert exported["tool_calls"] == [TOOL_CALL]
    assert exported["active"] is True
    assert set(exported) >= {"session_id", "position", "reasoning", "api_content", "created_at"}
    session = store.get_session(sid)
    assert session is not None
    assert json.loads(json.dumps(session.to_dict()))["id"] == sid


@pytest.mark.parametrize(
    ("message", "error"),
    [
        ({"role": "wizard", "content": "x"}, "role must be one of"),
        ({"content": "x"}, "role must be one of"),
        ({"role": "user", "content": ["part"]}, "'content' must be a string"),
        ({"role": "tool", "content": "x"}, "tool_call_id"),
        ({"role": "assistant", "tool_calls": "nope"}, "list of dicts"),
        ({"role": "user", "content": "x", "audio": {}}, "unsupported field"),
        ("just text", "must be a dict"),
        ({"role": "user", "content": "bad \ud800"}, "not valid Unicode"),
    ],
)
def test_invalid_messages_are_rejected_whole(
    store: StateStore, message: object, error: str
) -> None:
    sid = store.create_session()
    with pytest.raises(ValueError, match=error):
        store.append_messages(sid, [{"role": "user", "content": "fine"}, message])  # type: ignore[list-item]
    assert store.count_messages(sid, include_inactive=True) == 0


def test_append_to_unknown_session_fails_clearly(store: StateStore) -> None:
    with pytest.raises(StateError, match="unknown session"):
        store.append_message("missing", {"role": "user", "content": "x"})


def test_append_only_is_enforced_in_sql(store: StateStore, db_path: Path) -> None:
    sid = store.create_session()
    first, second = conversation(store, sid, 1)
    # A plain connection, as any other tool touching the file would open it.
    conn = sqlite3.connect(db_path, isolation_level=None)
    forbidden = [
        ("UPDATE messages SET content = 'rewritten' WHERE id = ?", (first.id,)),
        ("UPDATE messages SET content = content WHERE id = ?", (first.id,)),
        ("UPDATE messages SET role = 'system' WHERE id = ?", (first.id,)),
        ("UPDATE messages SET api_content = 'x' WHERE id = ?", (first.id,)),
        ("UPDATE messages SET tool_calls = '[]' WHERE id = ?", (first.id,)),
        ("UPDATE messages SET seq = 99 WHERE id = ?", (first.id,)),
        ("UPDATE messages SET session_id = session_id WHERE id = ?", (first.id,)),
        ("DELETE FROM messages WHERE id = ?", (first.id,)),
        (
            "INSERT OR REPLACE INTO messages (id, session_id, seq, position, role, content,"
            " created_at) VALUES (?, ?, 1, 1.0, 'user', 'replaced', 0)",
            (first.id, sid),
        ),
    ]
    for sql, params in forbidden:
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            conn.execute(sql, params)
    # Flags move one way only.
    conn.execute("UPDATE messages SET active = 0 WHERE id = ?", (second.id,))
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        conn.execute("UPDATE messages SET active = 1 WHERE id = ?", (second.id,))
    conn.execute("UPDATE messages SET compacted = 1 WHERE id = ?", (second.id,))
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        conn.execute("UPDATE messages SET compacted = 0 WHERE id = ?", (second.id,))
    conn.close()
    [kept] = store.get_messages(sid)
    assert kept == first  # content untouched
    assert store.count_messages(sid, include_inactive=True) == 2
    assert [h.message_id for h in store.search_messages("question")] == [first.id]


def seeded(store: StateStore) -> tuple[str, list[StoredMessage]]:
    sid = store.create_session()
    system = store.append_message(sid, {"role": "system", "content": "You are Herald."})
    return sid, [system, *conversation(store, sid, 4)]  # 9 rows: system + 8


def test_the_newest_message_id_is_the_last_row_written(store: StateStore) -> None:
    assert store.newest_message_id(store.create_session()) is None
    sid, rows = seeded(store)
    assert store.newest_message_id(sid) == rows[-1].id
    summary = store.archive_and_compact(
        sid, [m.id for m in rows[1:6]], [{"role": "user", "content": "[summary]"}]
    )
    assert store.newest_message_id(sid) == summary[0].id  # written last, placed mid-history


def test_archive_and_compact_replaces_a_middle_run(store: StateStore) -> None:
    sid, rows = seeded(store)
    head, middle, tail = rows[:1], rows[1:6], rows[6:]
    summary = store.archive_and_compact(
        sid,
        [m.id for m in reversed(middle)],  # order of ids does not matter
        [
            {"role": "user", "content": "[summary] we talked about the lighthouse"},
            {"role": "assistant", "content": "noted"},
        ],
    )
    active = store.get_messages(sid)
    assert [m.id for m in active] == [m.id for m in head + summary + tail]
    assert [m.seq for m in summary] == [10, 11]  # seq keeps counting
    assert head[0].position < summary[0].position < summary[1].position < tail[0].position
    everything = store.get_messages(sid, include_inactive=True)
    assert [m.seq for m in everything] == list(range(1, 12))
    archived = [m for m in everything if m.id in {x.id for x in middle}]
    assert all(not m.active and m.compacted for m in archived)
    assert [m.content for m in archived] == [m.content for m in middle]
    assert store.count_messages(sid) == 6
    assert store.count_messages(sid, include_inactive=True) == 11
    # Archived rows stay searchable, unless the caller asks for active ones only.
    hits = store.search_messages("question 1")
    assert middle[2].id in {h.message_id for h in hits}
    assert next(h for h in hits if h.message_id == middle[2].id).active is False
    assert middle[2].id not in {
        h.message_id for h in store.search_messages("question 1", include_inactive=False)
    }
    # Appends after a compaction land after the tail.
    later = store.append_message(sid, {"role": "user", "content": "next"})
    assert store.get_messages(sid)[-1] == later


def test_archive_and_compact_at_the_edges_and_repeatedly(store: StateStore) -> None:
    sid, rows = seeded(store)
    first = store.archive_and_compact(
        sid, [m.id for m in rows[:3]], [{"role": "user", "content": "S1"}]
    )
    assert [m.content for m in store.get_messages(sid)][:2] == ["S1", rows[3].content]
    last = store.archive_and_compact(
        sid,
        [rows[-1].id],
        [{"role": "assistant", "content": "S2a"}, {"role": "assistant", "content": "S2b"}],
    )
    assert [m.content for m in store.get_messages(sid)][-2:] == ["S2a", "S2b"]
    # Compacting the summaries again, many times, keeps a coherent order.
    for n in range(30):
        current = store.get_messages(sid)
        store.archive_and_compact(sid, [current[0].id], [{"role": "user", "content": f"S1.{n}"}])
    contents = [m.content for m in store.get_messages(sid)]
    assert contents[0] == "S1.29"
    assert contents[1:] == [m.content for m in rows[3:8]] + ["S2a", "S2b"]
    assert first[0].id not in {m.id for m in store.get_messages(sid)}
    assert last[0].active
    # An empty replacement simply archives.
    assert store.archive_and_compact(sid, [store.get_messages(sid)[-1].id], []) == []
    assert [m.content for m in store.get_messages(sid)][-1] == "S2a"


def test_archive_and_compact_rejects_bad_ranges_without_changes(store: StateStore) -> None:
    sid, rows = seeded(store)
    other = store.create_session()
    foreign = store.append_message(other, {"role": "user", "content": "elsewhere"})
    store.archive_and_compact(sid, [rows[8].id], [{"role": "assistant", "content": "sum"}])
    before = store.get_messages(sid, include_inactive=True)
    replacement = [{"role": "user", "content": "should not appear"}]
    cases = [
        ([rows[1].id, rows[3].id], "not a contiguous run"),
        ([rows[1].id, rows[2].id, rows[4].id], "not a contiguous run"),
        ([rows[8].id], "already archived"),
        ([foreign.id], "belongs to session"),
        ([999_999], "does not exist"),
        ([], "empty"),
        ([rows[1].id, rows[1].id], "duplicates"),
    ]
    for ids, reason in cases:
        with pytest.raises(ValueError, match=reason):
            store.archive_and_compact(sid, ids, replacement)
    with pytest.raises(ValueError, match="role must be one of"):
        store.archive_and_compact(sid, [rows[1].id], [{"role": "bogus", "content": "x"}])
    with pytest.raises(StateError, match="unknown session"):
        store.archive_and_compact("missing", [rows[1].id], replacement)
    assert store.get_messages(sid, include_inactive=True) == before
    assert store.search_messages("should not appear") == []
