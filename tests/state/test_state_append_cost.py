"""Appending stays cheap as a session grows (issue 30): a batch is one transaction, and
the next position comes from an index seek, not a scan of the session. Measured in
SQLite virtual-machine steps (deterministic), not in time."""

from __future__ import annotations

from herald.state import StateStore

STEP = 100  # opcodes per progress callback


def _steps_to_append_one(store: StateStore, sid: str) -> int:
    conn = store._writer
    assert conn is not None
    calls = 0

    def tick() -> int:
        nonlocal calls
        calls += 1
        return 0

    conn.set_progress_handler(tick, STEP)
    try:
        store.append_message(sid, {"role": "user", "content": "one more"})
    finally:
        conn.set_progress_handler(None, STEP)
    return calls


def test_one_append_costs_the_same_in_a_short_and_a_long_session(store: StateStore) -> None:
    short = store.create_session(profile="default", source="test")
    long = store.create_session(profile="default", source="test")
    store.append_messages(short, [{"role": "user", "content": "x"}] * 100)
    store.append_messages(long, [{"role": "user", "content": "x"}] * 20_000)
    small, big = _steps_to_append_one(store, short), _steps_to_append_one(store, long)
    # A scan of 20,000 rows alone would be several hundred callbacks; a seek is a few.
    assert big <= small * 2 + 5, (small, big)


def test_a_batch_is_one_transaction(store: StateStore) -> None:
    sid = store.create_session(profile="default", source="test")
    statements: list[str] = []
    conn = store._writer
    assert conn is not None
    conn.set_trace_callback(statements.append)
    try:
        stored = store.append_messages(
            sid, [{"role": "user", "content": f"m{i}"} for i in range(500)]
        )
    finally:
        conn.set_trace_callback(None)
    assert [m.seq for m in stored] == list(range(1, 501))
    assert sum(s.strip().upper().startswith("BEGIN") for s in statements) == 1
    assert sum(s.strip().upper() == "COMMIT" for s in statements) == 1
