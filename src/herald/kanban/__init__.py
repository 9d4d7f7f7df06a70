"""The task board (L2): durable tasks that agents claim with leases, report on and
finish, on one machine (SQLite in the home) or many (PostgreSQL), plus the
``kanban_*`` tools workers report with (exported as ``herald.kanban.tools.TOOLS``).

The dispatcher and the worker runner are a surface (L6) and live in
`herald.kanban.dispatch`, which this package never imports.
"""

from herald.kanban.board import Board
from herald.kanban.model import (
    ANY_ASSIGNEE,
    FINAL,
    HELD,
    Attachment,
    Claim,
    ClaimOwner,
    Comment,
    CycleError,
    InvalidTransition,
    KanbanError,
    Lease,
    LeaseLost,
    NewTask,
    OwnerOnly,
    Status,
    Task,
    TaskNotFound,
    is_owner,
)
from herald.kanban.open import base_root, host_name, open_board, process_owner, sqlite_path

__all__ = [
    "ANY_ASSIGNEE",
    "FINAL",
    "HELD",
    "Attachment",
    "Board",
    "Claim",
    "ClaimOwner",
    "Comment",
    "CycleError",
    "InvalidTransition",
    "KanbanError",
    "Lease",
    "LeaseLost",
    "NewTask",
    "OwnerOnly",
    "Status",
    "Task",
    "TaskNotFound",
    "base_root",
    "host_name",
    "is_owner",
    "open_board",
    "process_owner",
    "sqlite_path",
]
