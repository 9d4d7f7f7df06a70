"""`Board`: the one storage interface every backend implements (and the contract
tests in tests/kanban/test_board_contract.py hold each backend to).

Lease-checked calls take the `Lease` (or its token) the claim returned: only the
holder of the current lease can move a held task. Calls without a lease are
owner actions (the CLI); they refuse a held task unless ``override=True``, which
ends the lease and says so in a comment.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable

from herald.kanban.model import (
    Attachment,
    Claim,
    ClaimOwner,
    Comment,
    Lease,
    NewTask,
    Status,
    Task,
)


class Board(ABC):
    backend: str  # sqlite | postgres

    # ---- tasks -------------------------------------------------------------------------

    @abstractmethod
    def add(self, new: NewTask, *, author: str = "owner") -> Task: ...

    @abstractmethod
    def show(self, task_id: int) -> Task:
        """The task with its links, children, comments and attachments."""

    @abstractmethod
    def list(
        self, *, statuses: Iterable[Status] | None = None, assignee: str | None = None
    ) -> list[Task]:
        """Tasks by priority (highest first), then id."""

    @abstractmethod
    def update(
        self,
        task_id: int,
        *,
        title: str | None = None,
        body: str | None = None,
        priority: int | None = None,
        assignee: str | None = None,
    ) -> Task: ...

    @abstractmethod
    def link(self, blocker_id: int, blocked_id: int) -> None:
        """`blocker_id` blocks `blocked_id`: the latter is not ready until the former is done.
        Raises `CycleError` when that would close a dependency cycle."""

    @abstractmethod
    def unlink(self, blocker_id: int, blocked_id: int) -> None: ...

    @abstractmethod
    def set_parent(self, child_id: int, parent_id: int | None) -> None:
        """Raises `CycleError` when `parent_id` is `child_id` or one of its descendants."""

    @abstractmethod
    def comment(self, task_id: int, body: str, *, author: str) -> Comment: ...

    @abstractmethod
    def attach(self, task_id: int, kind: str, ref: str, *, note: str = "") -> Attachment: ...

    # ---- leases ------------------------------------------------------------------------

    @abstractmethod
    def claim(
        self,
        owner: ClaimOwner,
        ttl: float,
        *,
        assignees: Iterable[str] | None = None,
        task_id: int | None = None,
    ) -> Lease | None:
        """Atomically claim `task_id`, or the most urgent ready task whose assignee is one
        of `assignees` (any assignee when None). None when nothing is ready."""

    @abstractmethod
    def start(self, lease: Lease | str, *, session_id: str | None, pid: int | None) -> Task:
        """claimed → in_progress, recording the worker's session and process."""

    @abstractmethod
    def heartbeat(self, lease: Lease | str, ttl: float) -> float:
        """Renew the lease; the new expiry. Raises `LeaseLost` if it is no longer held."""

    @abstractmethod
    def release(
        self, lease: Lease | str, reason: str, *, author: str, use_attempt: bool = True
    ) -> Task:
        """The holder gives the task back without finishing: attempt +1 and back to todo,
        or `failed` (with every attempt's reason) once `max_attempts` is reached.
        ``use_attempt=False`` (the task never got to run) only returns it to todo."""

    @abstractmethod
    def reclaim_expired(self) -> list[int]:
        """Release every lease past its expiry (any host); the task ids."""

    @abstractmethod
    def reclaim_dead(self, host: str, is_alive: Callable[[int], bool]) -> list[int]:
        """Release the leases held on `host` by processes that no longer exist."""

    @abstractmethod
    def claims(self, task_id: int | None = None) -> list[Claim]:
        """The claim history, oldest first."""

    # ---- outcomes ----------------------------------------------------------------------

    @abstractmethod
    def complete(
        self,
        task_id: int,
        summary: str,
        *,
        lease: Lease | str | None = None,
        author: str,
        override: bool = False,
    ) -> Task: ...

    @abstractmethod
    def block(
        self,
        task_id: int,
        reason: str,
        *,
        lease: Lease | str | None = None,
        author: str,
        override: bool = False,
    ) -> Task: ...

    @abstractmethod
    def unblock(self, task_id: int, *, author: str, note: str = "") -> Task: ...

    @abstractmethod
    def request_review(
        self, task_id: int, summary: str, *, lease: Lease | str | None = None, author: str
    ) -> Task: ...

    @abstractmethod
    def approve(self, task_id: int, *, author: str, note: str = "") -> Task:
        """review → done."""

    @abstractmethod
    def reject(self, task_id: int, reason: str, *, author: str) -> Task:
        """review → todo, with the reason as a comment (no attempt is used up)."""

    @abstractmethod
    def task_for_session(self, session_id: str) -> Task | None:
        """The held task whose worker runs in `session_id` (the kanban tools' default)."""

    @abstractmethod
    def close(self) -> None: ...

    def __enter__(self) -> Board:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def token_of(lease: Lease | str | None) -> str | None:
    return lease.token if isinstance(lease, Lease) else lease
