"""The sub-agents of this process, by parent session: what `/agents` and
`delegate_task(action=list|steer|stop)` read and act on.

A `ChildRecord` is created when a task is accepted (status ``queued``), gets its
handle when the child starts (``running``) and its outcome when it ends
(``done``, ``timed_out``, ``stopped``, ``interrupted``, ``failed``,
``not_started``). Records of finished calls stay listed until the parent's next
delegation replaces them. A paused parent session starts no new children: queued
ones end as ``not_started`` and new calls are refused until it is resumed.
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any

RUNNING = "running"
QUEUED = "queued"
FINISHED = frozenset({"done", "timed_out", "stopped", "interrupted", "failed", "not_started"})


LABEL = "sub-agent"  # how a child is named in status lines: "sub-agent 2"
_LINE = re.compile(rf"^({LABEL} \S+) \[")


def child_of(status: str) -> str | None:
    """The child a status text is the `ChildRecord.line()` of ("sub-agent 2"), or None
    (a surface showing one status keeps a line per child with this)."""
    match = _LINE.match(status)
    return match.group(1) if match else None


@dataclass
class ChildRecord:
    id: str  # "1", "2", … in call order; unique per parent session
    index: int
    goal: str
    parent_session_id: str
    status: str = QUEUED
    session_id: str | None = None
    activity: str = ""  # the tool it is running, or its latest notice
    tool_calls: int = 0
    cost_usd: float = 0.0
    started_at: float | None = None
    ended_at: float | None = None
    handle: Any = None  # its TurnHandle while running
    stop_requested: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def label(self) -> str:
        return f"{LABEL} {self.id}"

    def elapsed(self) -> float:
        if self.started_at is None:
            return 0.0
        return (self.ended_at or time.monotonic()) - self.started_at

    def line(self) -> str:
        """One compact status line: ``sub-agent 2 [running 12s] terminal · 3 tools · $0.0012``."""
        goal = " ".join(self.goal.split())
        goal = goal if len(goal) <= 40 else goal[:39] + "…"
        parts = [f"{self.label} [{self.status} {self.elapsed():.0f}s] {goal}"]
        if self.activity and self.status == RUNNING:
            parts.append(self.activity)
        parts.append(f"{self.tool_calls} tool call{'s' if self.tool_calls != 1 else ''}")
        if self.cost_usd:
            parts.append(f"${self.cost_usd:.4f}")
        return " · ".join(parts)

    def stop(self) -> bool:
        """Stop this child (a queued one never starts); False once it has ended."""
        with self._lock:
            if self.status in FINISHED:
                return False
            self.stop_requested = True
            handle = self.handle
        if handle is not None:
            handle.interrupt()
        return True

    def steer(self, text: str) -> bool:
        handle = self.handle
        return bool(handle is not None and self.status == RUNNING and handle.steer(text))


class Board:
    """Children per parent session, and the parents whose spawning is paused."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._children: dict[str, list[ChildRecord]] = {}
        self._paused: set[str] = set()

    def open_call(self, parent_session_id: str, goals: list[str]) -> list[ChildRecord]:
        """Records for one call's tasks; the parent's finished records are dropped."""
        with self._lock:
            kept = [
                c for c in self._children.get(parent_session_id, []) if c.status not in FINISHED
            ]
            start = max((int(c.id) for c in kept), default=0)
            records = [
                ChildRecord(
                    id=str(start + i + 1), index=i, goal=g, parent_session_id=parent_session_id
                )
                for i, g in enumerate(goals)
            ]
            self._children[parent_session_id] = kept + records
            return records

    def children(self, parent_session_id: str | None) -> list[ChildRecord]:
        if parent_session_id is None:
            return []
        with self._lock:
            return list(self._children.get(parent_session_id, []))

    def all_children(self) -> list[ChildRecord]:
        """Every parent's children this process knows of (the web dashboard's list)."""
        with self._lock:
            return [child for records in self._children.values() for child in records]

    def find(self, parent_session_id: str | None, child_id: str) -> ChildRecord | None:
        wanted = child_id.strip().removeprefix("#")
        for child in self.children(parent_session_id):
            if child.id == wanted or (child.session_id and child.session_id == wanted):
                return child
        return None

    def pause(self, parent_session_id: str, paused: bool = True) -> None:
        with self._lock:
            if paused:
                self._paused.add(parent_session_id)
            else:
                self._paused.discard(parent_session_id)

    def paused(self, parent_session_id: str | None) -> bool:
        with self._lock:
            return parent_session_id in self._paused


# The process's board: every surface and every delegate_task call of this process share it.
board = Board()

__all__ = ["FINISHED", "LABEL", "QUEUED", "RUNNING", "Board", "ChildRecord", "board", "child_of"]
