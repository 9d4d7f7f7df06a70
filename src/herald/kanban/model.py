"""The board's values: tasks, comments, attachments, claims, and the errors a board raises."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any


class Status(StrEnum):
    TODO = "todo"
    CLAIMED = "claimed"
    IN_PROGRESS = "in_progress"
    BLOCKED = "blocked"
    REVIEW = "review"
    DONE = "done"
    FAILED = "failed"


# A lease is held while a task is in one of these.
HELD = (Status.CLAIMED, Status.IN_PROGRESS)
# Nothing happens to a task in one of these any more.
FINAL = (Status.DONE, Status.FAILED)
ANY_ASSIGNEE = "any"


class KanbanError(Exception):
    """A board operation that cannot be done; the message says why and what to do."""


class TaskNotFound(KanbanError):
    pass


class CycleError(KanbanError):
    """A link that would make a dependency (or parent) cycle."""


class LeaseLost(KanbanError):
    """The caller's lease on a task is gone (expired and reclaimed, or never held)."""


class InvalidTransition(KanbanError):
    """The task's status does not allow this operation."""


class OwnerOnly(KanbanError):
    """Only the owner may do this (approve, reject, unblock, move a task without its lease)."""


# The author the owner's own entrances use: the CLI, the chat's /kanban command and the
# web board ("owner (web)"). Agents write as "agent:SESSION" and workers as
# "worker@PID": a model never chooses its author, the tools set it.
OWNER = "owner"


def is_owner(author: str) -> bool:
    return author == OWNER or author.startswith(OWNER + " (")


def owner_only(task_id: int, status: str, author: str) -> OwnerOnly:
    """The refusal for `author` moving task `task_id` (in `status`) without its lease."""
    if status == "review":
        what = (
            f"task {task_id} is in review: only the owner approves or rejects it, a worker "
            f"never approves work (its own or another's). The owner does it with "
            f"`herald kanban approve {task_id}` (or `herald kanban reject {task_id} REASON`), "
            f"`/kanban approve {task_id}` in their chat, or the web board"
        )
    elif status == "blocked":
        what = (
            f"task {task_id} is blocked waiting for the owner: only the owner unblocks it, "
            f"with `herald kanban unblock {task_id}`, `/kanban unblock {task_id}` in their "
            "chat, or the web board"
        )
    else:
        what = (
            f"task {task_id} is {status}: only the worker holding its lease moves it, or the "
            f"owner (`herald kanban done|block {task_id}`)"
        )
    return OwnerOnly(f"Refused for {author}: {what}. Ask the owner; do not retry.")


@dataclass(frozen=True)
class Comment:
    id: int
    task_id: int
    author: str
    body: str
    created_at: float


@dataclass(frozen=True)
class Attachment:
    id: int
    task_id: int
    kind: str  # file | url
    ref: str
    note: str
    created_at: float


@dataclass(frozen=True)
class Claim:
    """One lease, from the claim to its end (`ended_at` None while it is held)."""

    id: int
    task_id: int
    token: str
    owner: str
    host: str
    pid: int | None
    claimed_at: float
    ended_at: float | None
    outcome: str | None  # done | blocked | review | released | expired | dead | overridden:*
    reason: str | None = None


@dataclass(frozen=True)
class Lease:
    """What a claimer holds: the task and the token every lease-checked call needs."""

    task_id: int
    token: str
    expires_at: float


@dataclass(frozen=True)
class ClaimOwner:
    """Who claims: a name for comments and logs, the host, and the process holding it."""

    name: str
    host: str
    pid: int | None = None


@dataclass(frozen=True)
class Task:
    id: int
    title: str
    body: str = ""
    status: Status = Status.TODO
    priority: int = 0
    assignee: str = ANY_ASSIGNEE
    parent_id: int | None = None
    created_at: float = 0.0
    updated_at: float = 0.0
    attempts: int = 0
    max_attempts: int = 3
    worker_session_id: str | None = None
    lease_token: str | None = None
    lease_owner: str | None = None
    lease_host: str | None = None
    lease_pid: int | None = None
    lease_expires_at: float | None = None
    result: str | None = None
    blocked_reason: str | None = None
    # Filled by `Board.show`; empty in lists.
    blocks: tuple[int, ...] = ()
    blocked_by: tuple[int, ...] = ()
    children: tuple[int, ...] = ()
    comments: tuple[Comment, ...] = field(default=())
    attachments: tuple[Attachment, ...] = field(default=())

    def to_dict(self, *, with_lease_token: bool = False) -> dict[str, Any]:
        data = asdict(self)
        data["status"] = self.status.value
        if not with_lease_token:
            data.pop("lease_token")
        return data


@dataclass(frozen=True)
class NewTask:
    """What `Board.add` needs; everything but the title has a default."""

    title: str
    body: str = ""
    priority: int = 0
    assignee: str = ANY_ASSIGNEE
    parent_id: int | None = None
    blocked_by: tuple[int, ...] = ()
    max_attempts: int | None = None
