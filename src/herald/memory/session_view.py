"""How session search shows stored messages and sessions: compact, bounded JSON.

Records come from `herald.state` (L5) through `ToolContext.store`; memory sits at
L2, so they are used by attribute (StoredMessage, SessionSummary), never imported.
Every message carries its id, role, created_at and content (cut per message
with a note saying how much was left out); secrets are masked with
`herald.safety.redact`. `Budget` keeps a whole result under a size cap: once
it is spent, further items are counted instead of shown, and the result says so.
"""

from __future__ import annotations

import json
import time
from typing import Any

from herald.safety import redact

PREVIEW_CHARS = 160
REDACT_MARGIN = 256


def iso(timestamp: float | None) -> str | None:
    if timestamp is None:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(timestamp))


def compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def clip_text(text: str | None, limit: int) -> str:
    text = text or ""
    if len(text) <= limit:
        return redact(text)
    # Redact a margin past the cut so a secret straddling it is still recognised whole.
    head = redact(text[: limit + REDACT_MARGIN])[:limit]
    return f"{head}…[{len(text) - limit:,} more chars not shown]"


def message_view(message: Any, limit: int, *, match: bool = False) -> dict[str, Any]:
    view: dict[str, Any] = {
        "id": message.id,
        "role": message.role,
        "created_at": iso(message.created_at),
        "content": clip_text(message.content, limit),
    }
    if message.tool_calls:
        names = [str((call.get("function") or {}).get("name", "?")) for call in message.tool_calls]
        view["tool_calls"] = names
    if message.tool_name:
        view["tool_name"] = message.tool_name
    if not message.active:
        view["archived"] = True  # replaced by a summary in the live session
    if match:
        view["match"] = True
    return view


def session_view(summary: Any, *, latest_id: str | None = None) -> dict[str, Any]:
    session = summary.session
    view: dict[str, Any] = {
        "session_id": session.id,
        "title": session.title or clip_text(summary.first_user_message, PREVIEW_CHARS) or None,
        "started_at": iso(session.created_at),
        "updated_at": iso(session.updated_at),
        "source": session.source,
        "messages": summary.message_count,
    }
    if summary.archived_count:
        view["archived_messages"] = summary.archived_count
    if session.parent_id:
        view["parent_id"] = session.parent_id
    if latest_id and latest_id != session.id:
        view["latest_session_id"] = latest_id
    return view


class Budget:
    """Characters left for a result; `take` says whether an item still fits."""

    def __init__(self, limit: int) -> None:
        self.left = limit
        self.dropped = 0

    def take(self, item: Any) -> bool:
        cost = len(compact(item)) + 1
        if cost > self.left:
            self.dropped += 1
            return False
        self.left -= cost
        return True

    def keep(self, items: list[Any]) -> list[Any]:
        return [item for item in items if self.take(item)]

    def note(self) -> str | None:
        if not self.dropped:
            return None
        return (
            f"{self.dropped} more item(s) not shown to keep this result small; "
            "narrow the request (a smaller window, a more specific query)"
        )
