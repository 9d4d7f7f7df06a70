"""`herald kanban work TASK_ID`: one task, one unattended Herald agent, one process.

The worker holds the task's lease (the dispatcher's claim, passed as ``--lease``,
or its own claim when started by hand), runs the agent in a session of its own
with the ``herald-kanban-worker`` toolset, and renews the lease from this thread
while the turn runs on the engine's, so a long tool call is not mistaken for a
dead worker. A turn that ends without the agent completing, blocking or asking
for review gives the task back (one attempt used; `failed` after max_attempts).
A lease lost meanwhile (it expired and someone reclaimed it) interrupts the turn.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from herald.config import with_turn_cap
from herald.kanban import (
    HELD,
    KanbanError,
    Lease,
    LeaseLost,
    Task,
    open_board,
    process_owner,
)

if TYPE_CHECKING:
    from herald.config import Settings
    from herald.kanban import Board
    from herald.tools import ToolRegistry

log = logging.getLogger(__name__)

WORKER_TOOLSET = "herald-kanban-worker"
SOURCE = "kanban"
EXIT_REPORTED = 0
EXIT_GAVE_BACK = 1
EXIT_CANNOT_START = 2


@dataclass
class WorkerOutcome:
    task_id: int
    code: int
    message: str


def task_workdir(settings: Settings, task_id: int) -> Path:
    path = settings.home.root / "kanban" / "tasks" / str(task_id)
    path.mkdir(parents=True, exist_ok=True)
    return path


def worker_prompt(task: Task) -> str:
    notes = [c for c in task.comments if not c.body.startswith("created by")][-10:]
    lines = [
        f"You are a worker on the Herald task board, working on task {task.id} alone: no",
        "human is watching this session.",
        "",
        f"Task {task.id}: {task.title}",
    ]
    if task.body.strip():
        lines += ["", task.body.strip()]
    if task.attempts:
        lines += ["", f"This is attempt {task.attempts + 1} of {task.max_attempts}."]
    if notes:
        lines += ["", "Comments so far:"] + [f"- {c.author}: {c.body}" for c in notes]
    lines += [
        "",
        "Do the work with your tools. Report with the kanban tools (they default to this task):",
        "kanban_comment for progress, kanban_create for sub-tasks, and end with exactly one of",
        "kanban_complete (done, with a summary of the result), kanban_request_review (the",
        "owner should check it) or kanban_block (you cannot go on without someone else, say",
        "why). Ending without one of these gives the task back as a failed attempt.",
    ]
    return "\n".join(lines)


def run_worker(
    settings: Settings, task_id: int, *, tools: ToolRegistry, lease_token: str | None = None
) -> WorkerOutcome:
    """Work on `task_id` with `tools` (the registry the surface starting the worker
    composed: `herald kanban work`)."""
    section = settings.config.kanban
    try:
        board = open_board(settings.config, settings.home, settings.secrets)
    except KanbanError as exc:
        return WorkerOutcome(task_id, EXIT_CANNOT_START, str(exc))
    try:
        return _run(settings, board, task_id, lease_token, section.lease_seconds, tools)
    finally:
        board.close()


def _run(
    settings: Settings,
    board: Board,
    task_id: int,
    token: str | None,
    ttl: float,
    tools: ToolRegistry,
) -> WorkerOutcome:
    if token is None:
        lease = board.claim(process_owner(settings.config, "worker"), ttl, task_id=task_id)
        if lease is None:
            task = board.show(task_id)
            why = f"task {task_id} is {task.status.value}"
            if task.status.value == "todo":
                why += f", waiting for task(s) {', '.join(map(str, task.blocked_by))}"
            return WorkerOutcome(task_id, EXIT_CANNOT_START, f"cannot work on it: {why}")
        token = lease.token
    try:
        return _work(settings, board, task_id, token, ttl, tools)
    except LeaseLost as exc:
        return WorkerOutcome(task_id, EXIT_GAVE_BACK, str(exc))


def _work(
    settings: Settings, board: Board, task_id: int, token: str, ttl: float, tools: ToolRegistry
) -> WorkerOutcome:
    from herald.engine import Agent, AgentOptions
    from herald.state import StateStore

    task = board.show(task_id)
    cap = settings.config.kanban.worker_max_cost_usd
    if cap is not None:  # the engine refuses a call whose estimate would pass it
        settings = with_turn_cap(settings, cap)
    store = StateStore(settings.home.state_db)
    agent = None
    try:
        try:
            agent = Agent.open(
                settings,
                store,
                source=SOURCE,
                title=f"kanban #{task.id}: {task.title}",
                tools=tools,
                options=AgentOptions(
                    toolset=WORKER_TOOLSET,
                    cwd=str(task_workdir(settings, task.id)),
                    max_iterations=settings.config.kanban.worker_max_iterations,
                    # nobody approves for a worker: read-only commands and these patterns
                    unattended_allow=tuple(settings.config.kanban.worker_allow),
                    unattended_hint="kanban.worker_allow: [{pattern}]",
                ),
            )
        except Exception as exc:  # a bad model config, say: the attempt ends here
            reason = f"the worker could not start an agent: {type(exc).__name__}: {exc}"
            return _give_back(board, task_id, token, reason)
        board.start(token, session_id=agent.session_id, pid=os.getpid())
        handle = agent.start_turn(worker_prompt(task))
        stop_requested, previous = _interrupt_on_sigterm(handle)
        try:
            lost = _keep_lease(
                board, task_id, token, ttl, settings.config.kanban.heartbeat_every, handle
            )
            result = handle.result()
        finally:
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)
    finally:
        if agent is not None:
            agent.close()
        store.close()
    if lost is not None:
        return WorkerOutcome(task_id, EXIT_GAVE_BACK, f"stopped: {lost}")
    after = board.show(task_id)
    if (
        after.lease_token == token
        and after.status in HELD
        and cap is not None
        and result.spend_cap == "budget.turn_usd"
    ):
        # Another attempt would only spend the same again: a human decides.
        reason = (
            f"stopped before passing kanban.worker_max_cost_usd (${cap:.2f}) after "
            f"${result.estimated_cost_usd:.2f}; raise the cap or split the task, then "
            f"`herald kanban unblock {task_id}`"
        )
        board.block(task_id, reason, lease=token, author=f"worker@{os.getpid()}")
        return WorkerOutcome(task_id, EXIT_REPORTED, f"task {task_id} is blocked: {reason}")
    if after.lease_token == token and after.status in HELD:
        ended = "stopped by a signal" if stop_requested.is_set() else result.exit_reason.value
        last = " ".join((result.final_text or result.error or "").split())[:300]
        reason = (
            "the worker ended without completing, blocking or requesting review "
            f"(turn {ended}{'; last reply: ' + last if last else ''})"
        )
        return _give_back(board, task_id, token, reason)
    return WorkerOutcome(task_id, EXIT_REPORTED, f"task {task_id} is {after.status.value}")


def _give_back(board: Board, task_id: int, token: str, reason: str) -> WorkerOutcome:
    task = board.release(token, reason, author=f"worker@{os.getpid()}")
    return WorkerOutcome(task_id, EXIT_GAVE_BACK, f"{reason}; task {task_id} is now {task.status}")


# Claim outcomes that mean this worker reported (the lease ended because it finished).
REPORTED_OUTCOMES = ("done", "blocked", "review")


def _keep_lease(
    board: Board, task_id: int, token: str, ttl: float, every: float, handle: object
) -> str | None:
    """Renew the lease until the turn ends; the reason it was lost, if it was."""
    wait = handle.wait  # type: ignore[attr-defined]
    while not wait(every):
        try:
            board.heartbeat(Lease(task_id, token, 0), ttl)
        except LeaseLost as exc:
            claim = next((c for c in board.claims(task_id) if c.token == token), None)
            if claim is not None and claim.outcome in REPORTED_OUTCOMES:
                wait()  # the agent reported: let it say its last words
                return None
            log.warning("lease lost, interrupting the turn: %s", exc)
            handle.interrupt()  # type: ignore[attr-defined]
            wait()
            return str(exc)
        except KanbanError as exc:  # the board is unreachable: keep trying until it expires
            log.warning("heartbeat failed (will retry): %s", exc)
    return None


def _interrupt_on_sigterm(handle: object) -> tuple[threading.Event, Any]:
    """SIGTERM stops the turn (the task is then given back); the handler it replaced."""
    requested = threading.Event()

    def on_term(signum: int, frame: object) -> None:
        requested.set()
        handle.interrupt()  # type: ignore[attr-defined]

    if threading.current_thread() is not threading.main_thread():
        return requested, None
    return requested, signal.signal(signal.SIGTERM, on_term)
