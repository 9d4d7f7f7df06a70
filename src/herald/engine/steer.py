"""Steering: text the user sends while a turn runs, delivered on the next tool result.

Steer never becomes a new user message (that would break role alternation and
the prompt cache); it rides on the newest tool message. Whatever is still
queued when the turn ends is handed back to the surface.
"""

from __future__ import annotations

import threading

STEER_HEADER = "[The user added, while you were working:]"


class SteerQueue:
    """One turn's steer. Once the turn ends the queue is closed: whatever was queued is
    handed back with the result, and a later push is refused (False) so the caller
    can send it as a message of its own — nothing is lost between the two."""

    def __init__(self) -> None:
        self._items: list[str] = []
        self._lock = threading.Lock()
        self._closed = False

    def push(self, text: str) -> bool:
        text = text.strip()
        with self._lock:
            if self._closed:
                return False
            if text:
                self._items.append(text)
            return True

    def close(self) -> str | None:
        """Drain for the last time; later pushes are refused."""
        with self._lock:
            self._closed = True
            items, self._items = self._items, []
        return "\n".join(items) if items else None

    def drain(self) -> str | None:
        with self._lock:
            items, self._items = self._items, []
        return "\n".join(items) if items else None

    def __bool__(self) -> bool:
        with self._lock:
            return bool(self._items)


def attach_steer(tool_output: str, steer: str) -> str:
    """The API copy of a tool result carrying the user's steer."""
    return f"{tool_output}\n\n{STEER_HEADER}\n{steer}"
