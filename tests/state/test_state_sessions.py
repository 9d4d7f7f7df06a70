"""Sessions: creation, lookup by prefix, updates, counters, system prompts, usage."""

from __future__ import annotations

import hashlib
import re

import pytest

from herald.state import SessionRecord, StateError, StateStore

SESSION_ID = re.compile(r"^\d{8}-\d{6}-[0-9a-f]{6}$")


def test_create_and_get_session(store: StateStore) -> None:
    sid = store.create_session(
        profile="work", source="telegram", model="gpt-x", provider="openai", title="Plans"
    )
    assert SESSION_ID.match(sid)
    record = store.get_session(sid)
    assert isinstance(record, SessionRecord)
    assert (record.profile, record.source, record.model, record.provider, record.title) == (
        "work",
        "telegram",
        "gpt-x",
        "openai",
        "Plans",
    )
    assert record.parent_id is None
    assert record.created_at == record.updated_at
    assert (record.prompt_tokens, record.api_calls, record.estimated_cost_usd) == (0, 0, 0.0)
    assert record.meta == {}
    assert store.get_session("20000101-000000-000000") is None


def test_ids_are_unique_and_sort_by_creation(store: StateStore) -> None:
    ids = [store.create_session() for _ in range(50)]
    assert len(set(ids)) == 50
    assert sorted(ids, key=lambda i: i[:15]) == ids


def test_lineage_parent_must_exist_and_cannot_loop(store: StateStore) -> None:
    root = store.create_session()
    child = store.create_session(parent_id=root)
    grandchild = store.create_session(parent_id=child)
    assert store.get_session(grandchild).parent_id == child  # type: ignore[union-attr]
    with pytest.raises(StateError, match="unknown session"):
        store.create_session(parent_id="nope")
    with pytest.raises(ValueError, match="lineage cannot loop"):
        store.update_session(root, parent_id=grandchild)
    with pytest.raises(ValueError, match="lineage cannot loop"):
        store.update_session(root, parent_id=root)
    assert store.get_session(root).parent_id is None  # type: ignore[union-attr]


def test_resolve_session_id(store: StateStore) -> None:
    first = store.create_session()
    assert store.resolve_session_id(first) == first
    assert store.resolve_session_id(f"  {first}\n") == first
    # Two ids sharing everything but the random tail: a long prefix is unique,
    # the shared timestamp part is ambiguous.
    conn = store._writer
    assert conn is not None
    for tail in ("aaa111", "aaa222"):
        conn.execute(
            "INSERT INTO sessions (id, created_at, updated_at) VALUES (?, 1.0, 1.0)",
            (f"19990101-000000-{tail}",),
        )
    assert store.resolve_session_id("19990101-000000-aaa1") == "19990101-000000-aaa111"
    with pytest.raises(StateError, match="ambiguous") as excinfo:
        store.resolve_session_id("19990101-000000-aaa")
    assert "19990101-000000-aaa111" in str(excinfo.value)
    assert "19990101-000000-aaa222" in str(excinfo.value)
    with pytest.raises(StateError, match="no session id starts with"):
        store.resolve_session_id("1888")
    with pytest.raises(StateError, match="no session id starts with"):
        store.resolve_session_id("%")  # LIKE wildcards mean nothing here
    with pytest.raises(StateError, match="no session id given"):
        store.resolve_session_id("   ")


def test_list_sessions_newest_updated_first_with_filters(store: StateStore) -> None:
    a = store.create_session(source="cli", profile="default")
    b = store.create_session(source="discord", profile="default")
    c = store.create_session(source="cli", profile="work")
    store.append_message(a, {"role": "user", "content": "bump a"})
    assert [s.id for s in store.list_sessions()][:3] == [a, c, b]
    assert [s.id for s in store.list_sessions(source="cli")] == [a, c]
    assert [s.id for s in store.list_sessions(profile="work")] == [c]
    assert [s.id for s in store.list_sessions(source="cli", profile="default")] == [a]
    assert len(store.list_sessions(limit=2)) == 2
    assert store.list_sessions(limit=0) == []


def test_update_session(store: StateStore) -> None:
    sid = store.create_session()
    before = store.get_session(sid)
    assert before is not None
    prompt_hash = store.put_system_prompt("You are Herald.")
    store.update_session(
        sid,
        title="Renamed",
        model="m2",
        provider="anthropic",
        system_prompt_hash=prompt_hash,
        last_exit_reason="completed",
        meta={"anchor": {"prompt_tokens": 1200, "message_id": 9}, "note": "é"},
    )
    after = store.get_session(sid)
    assert after is not None
    assert (after.title, after.model, after.provider, after.last_exit_reason) == (
        "Renamed",
        "m2",
        "anthropic",
        "completed",
    )
    assert after.system_prompt_hash == prompt_hash
    assert after.meta == {"anchor": {"prompt_tokens": 1200, "message_id": 9}, "note": "é"}
    assert after.updated_at >= before.updated_at
    store.update_session(sid, meta={"other": 1})  # replaced whole, not merged
    assert store.get_session(sid).meta == {"other": 1}  # type: ignore[union-attr]
    store.update_session(sid, title=None)
    assert store.get_session(sid).title is None  # type: ignore[union-attr]


def test_update_session_rejects_bad_input(store: StateStore) -> None:
    sid = store.create_session(title="keep")
    with pytest.raises(ValueError, match="cannot update session field"):
        store.update_session(sid, prompt_tokens=5)
    with pytest.raises(ValueError, match="meta must be a dict"):
        store.update_session(sid, meta=[1, 2])
    with pytest.raises(ValueError, match="not JSON-serializable"):
        store.update_session(sid, meta={"x": object()})
    with pytest.raises(ValueError, match="put_system_prompt"):
        store.update_session(sid, system_prompt_hash="0" * 64)
    with pytest.raises(StateError, match="unknown session"):
        store.update_session("missing", title="x")
    assert store.get_session(sid).title == "keep"  # type: ignore[union-attr]


def test_add_session_usage_increments(store: StateStore) -> None:
    sid = store.create_session()
    store.add_session_usage(sid, prompt_tokens=100, completion_tokens=20, api_calls=1, cost_usd=0.5)
    store.add_session_usage(
        sid,
        prompt_tokens=50,
        cache_read_tokens=40,
        cache_write_tokens=10,
        reasoning_tokens=7,
        api_calls=1,
        cost_usd=0.25,
    )
    record = store.get_session(sid)
    assert record is not None
    assert (
        record.prompt_tokens,
        record.completion_tokens,
        record.cache_read_tokens,
        record.cache_write_tokens,
        record.reasoning_tokens,
        record.api_calls,
    ) == (150, 20, 40, 10, 7, 2)
    assert record.estimated_cost_usd == pytest.approx(0.75)
    with pytest.raises(StateError, match="unknown session"):
        store.add_session_usage("missing", prompt_tokens=1)
    with pytest.raises(ValueError, match="non-negative"):
        store.add_session_usage(sid, prompt_tokens=-1)


def test_system_prompts_are_content_addressed(store: StateStore) -> None:
    text = "You are Herald. ünïcode ✓\n"
    digest = store.put_system_prompt(text)
    assert digest == hashlib.sha256(text.encode("utf-8")).hexdigest()
    assert store.put_system_prompt(text) == digest
    assert store.get_system_prompt(digest) == text
    assert store.get_system_prompt("f" * 64) is None


def test_record_and_list_usage(store: StateStore) -> None:
    sid = store.create_session()
    store.record_usage(
        sid,
        provider="openai",
        model="gpt-x",
        api_mode="chat_completions",
        prompt_tokens=900,
        completion_tokens=80,
        cache_read_tokens=600,
        cost_usd=0.01,
        duration_ms=1234,
        finish_reason="stop",
    )
    store.record_usage(sid, provider="openai", model="mini", kind="summary", duration_ms=12.7)
    rows = store.list_usage(sid)
    assert [(u.model, u.kind) for u in rows] == [("gpt-x", "main"), ("mini", "summary")]
    first = rows[0]
    assert (first.prompt_tokens, first.completion_tokens, first.cache_read_tokens) == (900, 80, 600)
    assert (first.api_mode, first.duration_ms, first.finish_reason) == (
        "chat_completions",
        1234,
        "stop",
    )
    assert first.cost_usd == pytest.approx(0.01)
    assert rows[1].duration_ms == 13
    assert rows[1].finish_reason is None
    with pytest.raises(StateError, match="unknown session"):
        store.record_usage("missing", provider="p", model="m")


def test_resolve_session_id_by_its_hex_tail(store: StateStore) -> None:
    conn = store._writer
    assert conn is not None
    for sid in ("19990101-000000-abc123", "19990101-000001-def456", "19990102-000000-ff3456"):
        conn.execute(
            "INSERT INTO sessions (id, created_at, updated_at, title) VALUES (?, 1.0, 1.0, ?)",
            (sid, f"title of {sid[-6:]}"),
        )
    assert store.resolve_session_id("abc123") == "19990101-000000-abc123"
    assert store.resolve_session_id("c123") == "19990101-000000-abc123"
    assert store.resolve_session_id("19990102") == "19990102-000000-ff3456"  # a prefix
    with pytest.raises(StateError, match="ambiguous") as excinfo:
        store.resolve_session_id("456")  # the tail of two sessions
    message = str(excinfo.value)
    assert "19990101-000001-def456" in message and "19990102-000000-ff3456" in message
    assert "title of def456" in message  # says which sessions they are
    with pytest.raises(StateError, match="ambiguous"):
        store.resolve_session_id("19990101")  # a date prefix of two sessions
    with pytest.raises(StateError, match="or ends with it"):
        store.resolve_session_id("zzz")


def test_list_sessions_can_leave_out_sources(store: StateStore) -> None:
    kept = store.create_session(source="cli")
    store.create_session(source="review")
    assert [s.id for s in store.list_sessions(exclude_sources=("review",))] == [kept]
    assert len(store.list_sessions()) == 2
