"""The inbound ledger and the outbox (migration 8) on a real state.db."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from herald.state import StateStore
from herald.state.gateway_liveness import InboundLedger, Outbox
from herald.state.schema import MIGRATIONS


def test_an_event_is_new_once_and_seen_after_in_the_same_process(tmp_path: Path) -> None:
    with StateStore(tmp_path / "state.db") as store:
        ledger = InboundLedger(store, "boot-1")
        assert ledger.record("telegram", "100001") == "new"
        assert ledger.record("telegram", "100001") == "seen"
        assert ledger.record("slack", "100001") == "new"  # ids are per platform


def test_across_a_restart_only_events_whose_turn_never_began_are_taken_again(
    tmp_path: Path,
) -> None:
    db = tmp_path / "state.db"
    with StateStore(db) as store:
        first = InboundLedger(store, "boot-1")
        for event in ("lost", "started", "done"):
            assert first.record("telegram", event) == "new"
        first.mark("telegram", "started", "started")
        first.mark("telegram", "done", "done")
    with StateStore(db) as store:
        second = InboundLedger(store, "boot-2")
        assert second.record("telegram", "done") == "seen"
        assert second.record("telegram", "started") == "seen"  # resume owns it
        assert second.record("telegram", "lost") == "new"  # acknowledged, never begun
        assert second.record("telegram", "lost") == "seen"


def test_done_is_final(tmp_path: Path) -> None:
    with StateStore(tmp_path / "state.db") as store:
        ledger = InboundLedger(store, "b")
        ledger.record("telegram", "1")
        ledger.mark("telegram", "1", "done")
        ledger.mark("telegram", "1", "started")  # a late mark never reopens it
        assert ledger.state_of("telegram", "1") == "done"


def test_the_outbox_keeps_a_failed_reply_until_it_is_delivered(tmp_path: Path) -> None:
    with StateStore(tmp_path / "state.db") as store:
        outbox = Outbox(store)
        outbox.owe("reply:a", platform="telegram", chat_id="1", thread_id=None,
                   reply_to="7", text="hello")  # fmt: skip
        outbox.owe("reply:a", platform="telegram", chat_id="1", thread_id=None,
                   reply_to="7", text="other")  # fmt: skip
        assert [r.text for r in outbox.undelivered()] == ["hello"]
        outbox.settle("reply:a", "failed", error="502", retry_at=50.0)
        assert outbox.due(49.0) == []
        (due,) = outbox.due(50.0)
        assert (due.attempts, due.last_error, due.reply_to) == (1, "502", "7")
        outbox.settle("reply:a", "delivered")
        assert outbox.undelivered() == [] and outbox.due(1e12) == []


def test_a_lower_migration_merged_later_still_runs_on_a_file_past_it(tmp_path: Path) -> None:
    """Branches take migration numbers in parallel; one merged after a higher number
    shipped must still be applied to files that already have the higher one."""
    db = tmp_path / "state.db"
    with StateStore(db):
        pass
    last = MIGRATIONS[-1]
    conn = sqlite3.connect(db)
    # Undo migration 6 by hand (its column is not used by any index but its own).
    conn.execute("DROP INDEX sessions_identity")
    conn.execute("ALTER TABLE sessions DROP COLUMN identity")
    conn.execute("ALTER TABLE messages DROP COLUMN identity")
    conn.execute("DELETE FROM schema_version WHERE version = 6")
    conn.commit()
    conn.close()
    with StateStore(db) as store:
        assert store.schema_version == last.version
    conn = sqlite3.connect(db)
    versions = [r[0] for r in conn.execute("SELECT version FROM schema_version ORDER BY 1")]
    columns = [r[1] for r in conn.execute("PRAGMA table_info(sessions)")]
    conn.close()
    assert versions == [m.version for m in MIGRATIONS]
    assert "identity" in columns
