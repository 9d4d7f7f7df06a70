"""The records of the cron tables (jobs, runs, locks, incidents, outbox items,
scheduler heartbeats) and the process checks behind stale locks and heartbeats."""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass, field
from typing import Any, Literal

from herald.environments.processes import pid_alive

RunStatus = Literal["ok", "failed", "blocked", "skipped", "missed"]
RunKind = Literal["scheduled", "manual"]


@dataclass(frozen=True)
class Job:
    id: int
    name: str
    schedule: str
    schedule_text: str
    tz: str
    prompt: str
    skills: tuple[str, ...] = ()
    allow: tuple[str, ...] = ()
    script: str | None = None
    deliver: str = "log"
    toolset: str | None = None
    model: str | None = None
    catch_up: str = "once"
    max_turns: int | None = None
    budget_tokens: int | None = None
    jitter_seconds: int = 0
    enabled: bool = True
    next_run: float | None = None
    created_at: float = 0.0
    updated_at: float = 0.0
    created_by: str = "unknown"  # cli (the owner) | tool (the model) | unknown (an old row)
    origin: str | None = None  # the chat a tool-made job came from: platform:chat[:thread]

    def to_dict(self) -> dict[str, Any]:
        data = {k: getattr(self, k) for k in self.__dataclass_fields__}
        data["skills"], data["allow"] = list(self.skills), list(self.allow)
        return data


@dataclass(frozen=True)
class RunRecord:
    id: int
    job_id: int
    job_name: str
    kind: str
    scheduled_for: float
    status: str
    reason: str | None
    error: str | None
    late: bool
    started_at: float | None
    finished_at: float
    session_id: str | None
    output: str | None
    tokens: int
    recorded_by: str

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


@dataclass(frozen=True)
class RunLock:
    job_id: int
    kind: str
    scheduled_for: float
    holder: str
    pid: int
    host: str
    taken_at: float
    expires_at: float

    def is_stale(self, now: float) -> bool:
        """Expired, or held by a process of this host that no longer exists."""
        if now >= self.expires_at:
            return True
        return self.host == socket.gethostname() and not pid_alive(self.pid)


@dataclass(frozen=True)
class Incident:
    id: int
    job_id: int
    job_name: str
    opened_at: float
    updated_at: float
    closed_at: float | None
    failures: int
    last_error: str


@dataclass(frozen=True)
class OutboxItem:
    id: int
    job_name: str
    run_id: int | None
    target: str
    what: str
    text: str
    status: str
    attempts: int
    error: str | None
    created_at: float


@dataclass(frozen=True)
class SchedulerBeat:
    holder: str
    kind: str
    pid: int
    host: str
    started_at: float
    beat_at: float
    interval: float

    def is_alive(self, now: float) -> bool:
        if now - self.beat_at > max(3 * self.interval, 90.0):
            return False
        return self.host != socket.gethostname() or pid_alive(self.pid)


@dataclass
class NewRun:
    """What a finished (or decided) occurrence records."""

    status: RunStatus
    reason: str | None = None
    error: str | None = None
    late: bool = False
    started_at: float | None = None
    session_id: str | None = None
    output: str | None = None
    tokens: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


def new_holder() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{os.urandom(3).hex()}"


__all__ = [
    "Incident",
    "Job",
    "NewRun",
    "OutboxItem",
    "RunKind",
    "RunLock",
    "RunRecord",
    "RunStatus",
    "SchedulerBeat",
    "new_holder",
]
