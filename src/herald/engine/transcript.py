"""The session's messages in memory, written to the store *before* they count.

Every append goes to disk first and joins the in-memory list only once the
store acknowledged it, so what the model is shown never runs ahead of what a
crash would leave behind (DESIGN invariant 5). The in-memory list holds the
API view: a message's `api_content`, when it has one, is what the model saw.
"""

from __future__ import annotations

from typing import Any

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

    def load(self) -> list[dict[str, Any]]:
        try:
            rows = self.store.get_messages(self.session_id)
        except Exception as exc:  # sqlite errors, StateError, refused input
            raise PersistenceError(f"could not read session {self.session_id}: {exc}") from exc
        return [row.to_api() for row in rows]

    def append(self, message: dict[str, Any], *, api_content: str | None = None) -> dict[str, Any]:
        try:
            self.store.append_message(self.session_id, message, api_content=api_content)
        except Exception as exc:  # sqlite errors, StateError, refused input
            raise PersistenceError(f"could not save a {message.get('role')} message: {exc}") from exc
        view = api_view(message, api_content)
        self.messages.append(view)
        self.added_this_turn.append(message)
        return view

    def extend(self, messages: list[dict[str, Any]]) -> None:
        if not messages:
            return
        try:
            self.store.append_messages(self.session_id, messages)
        except Exception as exc:  # sqlite errors, StateError, refused input
            raise PersistenceError(f"could not save {len(messages)} messages: {exc}") from exc
        for message in messages:
            self.messages.append(api_view(message, message.get("api_content")))
            self.added_this_turn.append(message)

    def start_turn(self) -> None:
        self.added_this_turn = []
