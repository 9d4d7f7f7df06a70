"""The board's surface (L6): the dispatcher that claims ready tasks and runs each in a
worker subprocess, and the worker that runs one task as an unattended Herald agent."""

from herald.kanban.dispatch.dispatcher import (
    Dispatcher,
    RoundReport,
    gateway_dispatcher,
)
from herald.kanban.dispatch.worker import (
    EXIT_CANNOT_START,
    EXIT_GAVE_BACK,
    EXIT_REPORTED,
    WORKER_TOOLSET,
    WorkerOutcome,
    run_worker,
    worker_prompt,
)

__all__ = [
    "EXIT_CANNOT_START",
    "EXIT_GAVE_BACK",
    "EXIT_REPORTED",
    "WORKER_TOOLSET",
    "Dispatcher",
    "RoundReport",
    "WorkerOutcome",
    "gateway_dispatcher",
    "run_worker",
    "worker_prompt",
]
