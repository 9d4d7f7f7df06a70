"""The session's messages in memory, written to the store *before* they count.

Every append goes to disk first and joins the in-memory list only once the
store acknowledged it, so what the model is shown never runs ahead of what a
crash would leave behind (DESIGN invariant 5). The in-memory list holds the
API view: a message's `api_content`, when it has one, is what the model saw.
Each view carries its stored row id under `ROW_ID` (stripped before a request
is sent) so a compression can say exactly which rows it archives.
"""

from __future__ import annotations

from typing import Any

from herald.context import ROW_ID
from herald.engine.ports import TranscriptStore


class PersistenceError(RuntimeError):
    """The store refused a write; the turn must stop rather than run unrecorded."""


def api_view(message: dict[str, Any], api_content: str | None) -> dict[str, Any]:
    """Exactly what the store's `to_api()` gives back for this message after a resume,
    so a resumed session sends the same bytes as the live one did."""
    view: dict[str, Any] = {
        "role": message["role"],
        "content": api_content if api_content is not None else message.get("content"),
    }
    if message.get("tool_calls"):
        view["tool_calls"] = message["tool_calls"]
    if message["role"] == "tool" and message.get("tool_call_id") is not None:
        view["tool_call_id"] = message["tool_call_id"]
    return view


class Transcript:
    def __init__(self, store: TranscriptStore, session_id: str):
        self.store = store
        self.session_id = session_id
        self.messages: list[dict[str, Any]] = []
        self.added_this_turn: list[dict[str, Any]] = []
        self.rewrites = 0  # compressions and prunings so far: each breaks the cached prefix

    def load(self) -> list[dict[str, Any]]:
        try:
            rows = self.store.get_messages(self.session_id)
        except Exception as exc:  # sqlite errors, StateError, refused input
            raise PersistenceError(f"could not read session {self.session_id}: {exc}") from exc
        return [{**row.to_api(), ROW_ID: row.id} for row in rows]

    def append(self, message: dict[str, Any], *, api_content: str | None = None) -> dict[str, Any]:
        try:
            stored = self.store.append_message(self.session_id, message, api_content=api_content)
        except Exception as exc:  # sqlite errors, StateError, refused input
            raise PersistenceError(f"could not save a {message.get('role')} message: {exc}") from exc
        view = api_view(message, api_content)
        view[ROW_ID] = stored.id
        self.messages.append(view)
        self.added_this_turn.append(message)
        return view

    def extend(self, messages: list[dict[str, Any]]) -> None:
        if not messages:
            return
        try:
            stored = self.store.append_messages(self.session_id, messages)
        except Exception as exc:  # sqlite errors, StateError, refused input
            raise PersistenceError(f"could not save {len(messages)} messages: {exc}") from exc
        for message, row in zip(messages, stored, strict=True):
            view = api_view(message, message.get("api_content"))
            view[ROW_ID] = row.id
            self.messages.append(view)
            self.added_this_turn.append(message)

    def replace(self, new_messages: list[dict[str, Any]]) -> int:
        """Make `new_messages` (a context engine's output) the history: the rows between
        the unchanged prefix and suffix are archived and the new rows inserted in one
        transaction (invariant 4: nothing is deleted). Returns the rows archived."""
        old = self.messages
        start = 0
        while start < min(len(old), len(new_messages)) and _same(old[start], new_messages[start]):
            start += 1
        end_old, end_new = len(old), len(new_messages)
        while end_old > start and end_new > start and _same(old[end_old - 1], new_messages[end_new - 1]):
            end_old -= 1
            end_new -= 1
        replaced = [m[ROW_ID] for m in old[start:end_old] if ROW_ID in m]
        inserted = [{k: v for k, v in m.items() if k != ROW_ID} for m in new_messages[start:end_new]]
        if not replaced and not inserted:
            return 0
        try:
            if replaced:
                stored = self.store.archive_and_compact(self.session_id, replaced, inserted)
            else:
                stored = self.store.append_messages(self.session_id, inserted)
        except Exception as exc:  # sqlite errors, StateError, a non-contiguous range
            raise PersistenceError(f"could not save the compressed history: {exc}") from exc
        views = []
        for message, row in zip(inserted, stored, strict=True):
            view = api_view(message, None)
            view[ROW_ID] = row.id
            views.append(view)
        self.messages = [*old[:start], *views, *new_messages[end_new:]]
        self.rewrites += 1
        return len(replaced)

    def start_turn(self) -> None:
        self.added_this_turn = []


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """The same stored row, unchanged (an engine may copy rows it keeps)."""
    if a is b:
        return True
    return ROW_ID in a and a.get(ROW_ID) == b.get(ROW_ID) and a == b
