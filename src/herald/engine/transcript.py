"""The session's messages in memory, written to the store *before* they count.

Every append goes to disk first and joins the in-memory list only once the
store acknowledged it, so what the model is shown never runs ahead of what a
crash would leave behind (DESIGN invariant 5). The in-memory list holds
`Message` values made from the stored rows (`row_id` set, `to_api()` equal to
what a resumed session sends), so a compression can say exactly which rows it
archives: the context engines take and return these values, and `replace()`
archives the stored rows their result no longer holds.
"""

from __future__ import annotations

from typing import Any

from herald.engine.ports import TranscriptStore
from herald.engine.provenance import fenced_api_content, label_replacement
from herald.providers.message import Message


class PersistenceError(RuntimeError):
    """The store refused a write; the turn must stop rather than run unrecorded."""


class Transcript:
    def __init__(self, store: TranscriptStore, session_id: str):
        self.store = store
        self.session_id = session_id
        self.messages: list[Message] = []
        self.added_this_turn: list[dict[str, Any]] = []  # as appended (reasoning included)
        self.rewrites = 0  # compressions and prunings so far: each breaks the cached prefix

    def load(self) -> list[Message]:
        try:
            rows = self.store.get_messages(self.session_id)
        except Exception as exc:  # sqlite errors, StateError, refused input
            raise PersistenceError(f"could not read session {self.session_id}: {exc}") from exc
        return [row.to_message() for row in rows]

    def api_messages(self) -> list[dict[str, Any]]:
        """The history as a request sends it."""
        return [m.to_api() for m in self.messages]

    def append(
        self, message: dict[str, Any] | Message, *, api_content: str | None = None
    ) -> Message:
        if isinstance(message, Message):
            if api_content is None:
                api_content = message.api_content
            message = message.evolve(api_content=None).to_store()
        api_content = fenced_api_content(message, api_content)
        try:
            stored = self.store.append_message(self.session_id, message, api_content=api_content)
        except Exception as exc:  # sqlite errors, StateError, refused input
            raise PersistenceError(
                f"could not save a {message.get('role')} message: {exc}"
            ) from exc
        view = stored.to_message()
        self.messages.append(view)
        self.added_this_turn.append(message)
        return view

    def extend(self, messages: list[dict[str, Any] | Message]) -> None:
        if not messages:
            return
        messages = [_fenced_row(m.to_store() if isinstance(m, Message) else m) for m in messages]
        try:
            stored = self.store.append_messages(self.session_id, messages)
        except Exception as exc:  # sqlite errors, StateError, refused input
            raise PersistenceError(f"could not save {len(messages)} messages: {exc}") from exc
        for message, row in zip(messages, stored, strict=True):
            self.messages.append(row.to_message())
            self.added_this_turn.append(message)

    def adopt(self, items: list[Message | dict[str, Any]]) -> list[Message]:
        """A context engine's output as messages. A `Message` is taken as it is (a kept
        one still carries its row id); a plain dict, from an engine written against the
        old dict contract, is a new message."""
        return [m if isinstance(m, Message) else Message.from_api(m) for m in items]

    def replace(self, new_rows: list[Message | dict[str, Any]]) -> int:
        """Make `new_rows` (a context engine's output) the history: the rows between
        the unchanged prefix and suffix are archived and the new rows inserted in one
        transaction (invariant 4: nothing is deleted). Returns the rows archived."""
        old = self.messages
        new_messages = self.adopt(new_rows)
        start = 0
        while start < min(len(old), len(new_messages)) and _same(old[start], new_messages[start]):
            start += 1
        end_old, end_new = len(old), len(new_messages)
        while (
            end_old > start
            and end_new > start
            and _same(old[end_old - 1], new_messages[end_new - 1])
        ):
            end_old -= 1
            end_new -= 1
        replaced = [m.row_id for m in old[start:end_old] if m.row_id is not None]
        inserted = [m.to_store() for m in new_messages[start:end_new]]
        # A summary of untrusted rows is untrusted, with their sources (invariant 18).
        label_replacement(old[start:end_old], inserted)
        inserted = [_fenced_row(row) for row in inserted]
        if not replaced and not inserted:
            return 0
        try:
            if replaced:
                stored = self.store.archive_and_compact(self.session_id, replaced, inserted)
            else:
                stored = self.store.append_messages(self.session_id, inserted)
        except Exception as exc:  # sqlite errors, StateError, a non-contiguous range
            raise PersistenceError(f"could not save the compressed history: {exc}") from exc
        views = [row.to_message() for row in stored]
        self.messages = [*old[:start], *views, *new_messages[end_new:]]
        self.rewrites += 1
        return len(replaced)

    def start_turn(self) -> None:
        self.added_this_turn = []


def _fenced_row(row: dict[str, Any]) -> dict[str, Any]:
    api_content = fenced_api_content(row, row.get("api_content"))
    if api_content is not None:
        row = {**row, "api_content": api_content}
    return row


def _same(a: Message, b: Message) -> bool:
    """The same stored row, unchanged."""
    return a is b or (a.row_id is not None and a == b)
