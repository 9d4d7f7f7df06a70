"""The gateway's tables in state.db (migration 4): which Herald session a chat's
session key maps to, which turns were running (so a restart can resume them), the
delivery ledger (every outbound part with its platform message id, so a retry never
sends a part twice) and the dead targets (chats that will never accept a message).

`GatewayState` wraps a `StateStore` and writes through the store's own serialized
writer, so these rows share its transactions, locking and durability.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Literal

from herald.state.store import StateStore

DeliveryStatus = Literal["pending", "sent", "failed", "dead"]


@dataclass(frozen=True)
class InflightTurn:
    session_key: str
    profile: str
    session_id: str
    platform: str
    chat_id: str
    thread_id: str | None
    user_id: str | None
    message_id: str | None
    text: str
    started_at: float = 0.0


@dataclass(frozen=True)
class DeliveryPart:
    delivery_key: str
    part_index: int
    part_count: int
    platform: str
    chat_id: str
    message_id: str | None
    status: DeliveryStatus
    attempts: int
    error: str | None


class GatewayState:
    def __init__(self, store: StateStore) -> None:
        self.store = store

    # ---- session map ----------------------------------------------------------------------

    def session_for(self, session_key: str) -> str | None:
        rows = self.store._read(
            "SELECT session_id FROM gateway_sessions WHERE session_key = ?", (session_key,)
        )
        return rows[0]["session_id"] if rows else None

    def bind_session(self, session_key: str, profile: str, session_id: str) -> None:
        now = time.time()
        with self.store._transaction() as conn:
            conn.execute(
                "INSERT INTO gateway_sessions (session_key, profile, session_id, created_at,"
                " updated_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT(session_key) DO UPDATE SET"
                " profile = excluded.profile, session_id = excluded.session_id,"
                " updated_at = excluded.updated_at",
                (session_key, profile, session_id, now, now),
            )

    def unbind_session(self, session_key: str) -> None:
        with self.store._transaction() as conn:
            conn.execute("DELETE FROM gateway_sessions WHERE session_key = ?", (session_key,))

    # ---- turns in flight ------------------------------------------------------------------

    def mark_inflight(self, turn: InflightTurn) -> None:
        with self.store._transaction() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO gateway_inflight (session_key, profile, session_id,"
                " platform, chat_id, thread_id, user_id, message_id, text, started_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    turn.session_key,
                    turn.profile,
                    turn.session_id,
                    turn.platform,
                    turn.chat_id,
                    turn.thread_id,
                    turn.user_id,
                    turn.message_id,
                    turn.text,
                    turn.started_at or time.time(),
                ),
            )

    def clear_inflight(self, session_key: str) -> None:
        with self.store._transaction() as conn:
            conn.execute("DELETE FROM gateway_inflight WHERE session_key = ?", (session_key,))

    def take_inflight(self, turn: InflightTurn) -> bool:
        """Clear `turn`'s mark if it is still the one its session has (a turn begun since,
        which replaced it, keeps its own): whether it was."""
        with self.store._transaction() as conn:
            cursor = conn.execute(
                "DELETE FROM gateway_inflight WHERE session_key = ? AND started_at = ?",
                (turn.session_key, turn.started_at),
            )
            return cursor.rowcount > 0

    def inflight_turns(self) -> list[InflightTurn]:
        rows = self.store._read("SELECT * FROM gateway_inflight ORDER BY started_at")
        return [
            InflightTurn(
                session_key=row["session_key"],
                profile=row["profile"],
                session_id=row["session_id"],
                platform=row["platform"],
                chat_id=row["chat_id"],
                thread_id=row["thread_id"],
                user_id=row["user_id"],
                message_id=row["message_id"],
                text=row["text"],
                started_at=row["started_at"],
            )
            for row in rows
        ]

    # ---- delivery ledger ------------------------------------------------------------------

    def delivery_parts(self, delivery_key: str) -> dict[int, DeliveryPart]:
        rows = self.store._read(
            "SELECT * FROM gateway_deliveries WHERE delivery_key = ? ORDER BY part_index",
            (delivery_key,),
        )
        return {
            row["part_index"]: DeliveryPart(
                delivery_key=row["delivery_key"],
                part_index=row["part_index"],
                part_count=row["part_count"],
                platform=row["platform"],
                chat_id=row["chat_id"],
                message_id=row["message_id"],
                status=row["status"],
                attempts=row["attempts"],
                error=row["error"],
            )
            for row in rows
        }

    def has_delivery(self, delivery_key: str) -> bool:
        rows = self.store._read(
            "SELECT 1 FROM gateway_deliveries WHERE delivery_key = ? AND status = 'sent' LIMIT 1",
            (delivery_key,),
        )
        return bool(rows)

    def record_part(
        self,
        delivery_key: str,
        part_index: int,
        part_count: int,
        *,
        platform: str,
        chat_id: str,
        status: DeliveryStatus,
        message_id: str | None = None,
        error: str | None = None,
        attempt: bool = False,
    ) -> None:
        """Insert or update one part; `attempt=True` counts a send attempt."""
        now = time.time()
        with self.store._transaction() as conn:
            conn.execute(
                "INSERT INTO gateway_deliveries (delivery_key, part_index, part_count, platform,"
                " chat_id, message_id, status, attempts, error, created_at, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT(delivery_key, part_index) DO UPDATE SET"
                " status = excluded.status,"
                " message_id = COALESCE(excluded.message_id, gateway_deliveries.message_id),"
                " attempts = gateway_deliveries.attempts + excluded.attempts,"
                " error = excluded.error, updated_at = excluded.updated_at",
                (
                    delivery_key,
                    part_index,
                    part_count,
                    platform,
                    chat_id,
                    message_id,
                    status,
                    1 if attempt else 0,
                    error,
                    now,
                    now,
                ),
            )

    # ---- dead targets ---------------------------------------------------------------------

    def mark_dead(self, platform: str, chat_id: str, reason: str | None) -> None:
        with self.store._transaction() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO gateway_dead_targets (platform, chat_id, reason,"
                " marked_at) VALUES (?, ?, ?, ?)",
                (platform, chat_id, reason, time.time()),
            )

    def is_dead(self, platform: str, chat_id: str) -> bool:
        rows = self.store._read(
            "SELECT 1 FROM gateway_dead_targets WHERE platform = ? AND chat_id = ?",
            (platform, chat_id),
        )
        return bool(rows)

    def revive(self, platform: str, chat_id: str) -> bool:
        """The chat wrote to us again: it is alive. True when it had been marked dead."""
        with self.store._transaction() as conn:
            cursor = conn.execute(
                "DELETE FROM gateway_dead_targets WHERE platform = ? AND chat_id = ?",
                (platform, chat_id),
            )
            return cursor.rowcount > 0


__all__ = ["DeliveryPart", "DeliveryStatus", "GatewayState", "InflightTurn"]
