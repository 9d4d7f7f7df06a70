"""The gateway's liveness tables in state.db (migration 8).

`InboundLedger` (``gateway_inbound``): every inbound platform event by its platform
id, recorded before the adapter acknowledges it, so a replay (a re-fetched update, a
Slack retry, a resent websocket dispatch) is answered at most once, across adapter
restarts and process restarts. An event moves ``received`` → ``started`` (its turn
is marked in flight; a restart resumes it) → ``done`` (answered). A replay of an
event still ``received`` by an earlier process (it died before the turn began) is
taken again, so nothing acknowledged is lost either.

`Outbox` (``gateway_outbox``): the whole text of every reply the gateway owes, next
to the per-part ledger (``gateway_deliveries``), so a reply that could not be
delivered is retried with backoff — after a platform outage, and after a restart —
and `herald gateway status` can count what is still owed.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Literal

from herald.state.store import StateStore

InboundState = Literal["received", "started", "done"]
OutboxState = Literal["pending", "delivered", "failed", "dead"]


class InboundLedger:
    def __init__(self, store: StateStore, boot: str) -> None:
        self.store = store
        self.boot = boot  # this process: a `received` row of another boot was lost

    def record(self, platform: str, event_id: str) -> Literal["new", "seen"]:
        now = time.time()
        with self.store._transaction() as conn:
            row = conn.execute(
                "SELECT state, boot FROM gateway_inbound WHERE platform = ? AND event_id = ?",
                (platform, event_id),
            ).fetchone()
            if row is None:
                conn.execute(
                    "INSERT INTO gateway_inbound (platform, event_id, state, boot, received_at,"
                    " updated_at) VALUES (?, ?, 'received', ?, ?, ?)",
                    (platform, event_id, self.boot, now, now),
                )
                return "new"
            if row["state"] != "received" or row["boot"] == self.boot:
                return "seen"
            conn.execute(
                "UPDATE gateway_inbound SET boot = ?, updated_at = ? WHERE platform = ?"
                " AND event_id = ?",
                (self.boot, now, platform, event_id),
            )
            return "new"

    def mark(self, platform: str, event_id: str, state: InboundState) -> None:
        with self.store._transaction() as conn:
            conn.execute(
                "UPDATE gateway_inbound SET state = ?, updated_at = ? WHERE platform = ?"
                " AND event_id = ? AND state != 'done'",
                (state, time.time(), platform, event_id),
            )

    def state_of(self, platform: str, event_id: str) -> InboundState | None:
        rows = self.store._read(
            "SELECT state FROM gateway_inbound WHERE platform = ? AND event_id = ?",
            (platform, event_id),
        )
        return rows[0]["state"] if rows else None

    def prune(self, older_than: float) -> int:
        with self.store._transaction() as conn:
            cursor = conn.execute(
                "DELETE FROM gateway_inbound WHERE received_at < ? AND state = 'done'",
                (older_than,),
            )
            return cursor.rowcount


@dataclass(frozen=True)
class OwedReply:
    delivery_key: str
    platform: str
    chat_id: str
    thread_id: str | None
    reply_to: str | None
    text: str
    state: OutboxState
    attempts: int
    next_attempt_at: float
    last_error: str | None
    created_at: float


class Outbox:
    def __init__(self, store: StateStore) -> None:
        self.store = store

    def owe(
        self,
        key: str,
        *,
        platform: str,
        chat_id: str,
        thread_id: str | None,
        reply_to: str | None,
        text: str,
    ) -> None:
        """Remember a reply before its first send (a second call for the key is a no-op)."""
        now = time.time()
        with self.store._transaction() as conn:
            conn.execute(
                "INSERT INTO gateway_outbox (delivery_key, platform, chat_id, thread_id,"
                " reply_to, text, state, attempts, next_attempt_at, created_at, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?)"
                " ON CONFLICT(delivery_key) DO NOTHING",
                (key, platform, chat_id, thread_id, reply_to, text, now, now, now),
            )

    def settle(
        self, key: str, state: OutboxState, *, error: str | None = None, retry_at: float = 0.0
    ) -> None:
        with self.store._transaction() as conn:
            conn.execute(
                "UPDATE gateway_outbox SET state = ?, attempts = attempts + 1, last_error = ?,"
                " next_attempt_at = ?, updated_at = ? WHERE delivery_key = ?",
                (state, error, retry_at, time.time(), key),
            )

    def due(self, now: float, *, limit: int = 50) -> list[OwedReply]:
        rows = self.store._read(
            "SELECT * FROM gateway_outbox WHERE state = 'failed' AND next_attempt_at <= ?"
            " ORDER BY next_attempt_at LIMIT ?",
            (now, limit),
        )
        return [_owed(row) for row in rows]

    def undelivered(self, platform: str | None = None) -> list[OwedReply]:
        """Replies still owed (pending or failed), oldest first."""
        if platform is None:
            rows = self.store._read(
                "SELECT * FROM gateway_outbox WHERE state IN ('pending', 'failed')"
                " ORDER BY created_at"
            )
        else:
            rows = self.store._read(
                "SELECT * FROM gateway_outbox WHERE state IN ('pending', 'failed')"
                " AND platform = ? ORDER BY created_at",
                (platform,),
            )
        return [_owed(row) for row in rows]

    def get(self, key: str) -> OwedReply | None:
        rows = self.store._read("SELECT * FROM gateway_outbox WHERE delivery_key = ?", (key,))
        return _owed(rows[0]) if rows else None

    def prune(self, older_than: float) -> int:
        with self.store._transaction() as conn:
            cursor = conn.execute(
                "DELETE FROM gateway_outbox WHERE updated_at < ? AND state IN ('delivered', 'dead')",
                (older_than,),
            )
            return cursor.rowcount


def _owed(row: object) -> OwedReply:
    r = row  # sqlite3.Row
    return OwedReply(
        delivery_key=r["delivery_key"],  # type: ignore[index]
        platform=r["platform"],  # type: ignore[index]
        chat_id=r["chat_id"],  # type: ignore[index]
        thread_id=r["thread_id"],  # type: ignore[index]
        reply_to=r["reply_to"],  # type: ignore[index]
        text=r["text"],  # type: ignore[index]
        state=r["state"],  # type: ignore[index]
        attempts=r["attempts"],  # type: ignore[index]
        next_attempt_at=r["next_attempt_at"],  # type: ignore[index]
        last_error=r["last_error"],  # type: ignore[index]
        created_at=r["created_at"],  # type: ignore[index]
    )


__all__ = ["InboundLedger", "InboundState", "Outbox", "OutboxState", "OwedReply"]
