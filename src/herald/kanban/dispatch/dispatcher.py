"""The dispatcher: claims ready tasks, runs each in a worker subprocess, reaps them.

Each round it (1) reaps finished workers, giving back a task whose worker died
without reporting, (2) reclaims leases that expired on any host and leases held
by dead processes on this host, then (3) claims ready tasks for the profiles this
home serves, up to `kanban.max_workers`, and spawns ``herald kanban work ID
--lease TOKEN`` for each. Workers run in sessions of their own: a dispatcher that
stops or dies leaves them running, and they finish (or lose their lease) alone.

Spawning that fails `kanban.spawn_failures` times in a row opens a circuit
breaker: no spawns for `kanban.breaker_seconds`, said once in the log.
"""

from __future__ import annotations

import logging
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from herald.environments.processes import pid_alive
from herald.kanban import (
    ANY_ASSIGNEE,
    HELD,
    Board,
    KanbanError,
    Lease,
    Status,
    base_root,
    host_name,
    open_board,
    process_owner,
)
from herald.kanban.dispatch.worker import EXIT_CANNOT_START

if TYPE_CHECKING:
    from herald.config import Settings

log = logging.getLogger(__name__)


@dataclass
class Running:
    lease: Lease
    proc: subprocess.Popen[bytes]
    profile: str


@dataclass
class RoundReport:
    reaped: list[int] = field(default_factory=list)
    reclaimed: list[int] = field(default_factory=list)
    spawned: list[int] = field(default_factory=list)
    breaker_open: bool = False


class Dispatcher:
    def __init__(
        self,
        settings: Settings,
        *,
        board: Board | None = None,
        command: Sequence[str] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.settings = settings
        self.section = settings.config.kanban
        self.board = board or open_board(settings.config, settings.home, settings.secrets)
        self.host = host_name(settings.config)
        self.owner = process_owner(settings.config, "dispatcher")
        # The worker command without "kanban work ID --lease T" (tests point it elsewhere).
        self.command = list(command) if command is not None else [sys.executable, "-m", "herald"]
        self.clock = clock
        self.running: dict[int, Running] = {}
        self.failures = 0
        self.breaker_until: float | None = None
        self.last_spawn_error = ""

    # ---- what this home serves ---------------------------------------------------------

    def own_profile(self) -> str:
        return self.settings.home.profile_label

    def served_assignees(self) -> list[str]:
        """ "any" and every profile that exists in this home (a task for another
        profile runs as that profile)."""
        names = [ANY_ASSIGNEE, "default"]
        profiles = base_root(self.settings.home) / "profiles"
        if profiles.is_dir():
            names += sorted(p.name for p in profiles.iterdir() if p.is_dir())
        return list(dict.fromkeys(names))

    # ---- one round -----------------------------------------------------------------------

    def round(self) -> RoundReport:
        report = RoundReport()
        report.reaped = self.reap()
        self.cover_starting_workers()
        report.reclaimed = self.board.reclaim_expired() + self.board.reclaim_dead(
            self.host, pid_alive
        )
        for task_id in report.reclaimed:
            log.warning(
                "kanban: reclaimed task %d (its worker stopped renewing its lease)", task_id
            )
        if self.breaker_until is not None:
            if self.clock() < self.breaker_until:
                report.breaker_open = True
                return report
            log.info("kanban dispatcher: circuit breaker closed, spawning again")
            self.breaker_until, self.failures = None, 0
        while len(self.running) < self.section.max_workers:
            lease = self.board.claim(
                self.owner, self.section.lease_seconds, assignees=self.served_assignees()
            )
            if lease is None:
                break
            if self.spawn(lease):
                report.spawned.append(lease.task_id)
            elif self.breaker_until is not None:
                report.breaker_open = True
                break
        return report

    def spawn(self, lease: Lease) -> bool:
        task = self.board.show(lease.task_id)
        profile = self.own_profile() if task.assignee == ANY_ASSIGNEE else task.assignee
        argv = list(self.command)
        if profile != "default":
            argv += ["--profile", profile]
        argv += ["kanban", "work", str(task.id), "--lease", lease.token]
        logs = self.settings.home.logs_dir / "kanban"
        try:
            logs.mkdir(parents=True, exist_ok=True)
            with open(logs / f"task-{task.id}.log", "ab") as out:
                proc = subprocess.Popen(
                    argv,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,  # a dying dispatcher does not take workers along
                )
        except OSError as exc:
            self.spawn_failed(lease, f"{type(exc).__name__}: {exc}")
            return False
        self.running[task.id] = Running(lease, proc, profile)
        log.info("kanban: task %d → worker pid %d (profile %s)", task.id, proc.pid, profile)
        return True

    def spawn_failed(self, lease: Lease, error: str) -> None:
        self.failures += 1
        self.last_spawn_error = error
        try:  # it never ran: no attempt is used up
            self.board.release(
                lease,
                f"the dispatcher on {self.host} could not start a worker ({error})",
                author=self.owner.name,
                use_attempt=False,
            )
        except KanbanError as exc:
            log.warning("kanban: could not give back task %d: %s", lease.task_id, exc)
        if self.failures >= self.section.spawn_failures and self.breaker_until is None:
            self.breaker_until = self.clock() + self.section.breaker_seconds
            log.error(
                "kanban dispatcher: circuit breaker open after %d worker spawns failed in a "
                "row (last: %s); no new workers for %g s. Check that `%s kanban work` runs "
                "on this host",
                self.failures,
                error,
                self.section.breaker_seconds,
                " ".join(self.command),
            )

    def cover_starting_workers(self) -> None:
        """Renew the claims of workers still starting up (a cold start on a busy host can
        take longer than a short lease); once started, a worker heartbeats itself."""
        for task_id, run in self.running.items():
            try:
                if self.board.show(task_id).status is Status.CLAIMED:
                    self.board.heartbeat(run.lease, self.section.lease_seconds)
            except KanbanError:
                continue  # lost meanwhile: the reaper sorts it out

    def reap(self) -> list[int]:
        finished: list[int] = []
        for task_id, run in list(self.running.items()):
            code = run.proc.poll()
            if code is None:
                continue
            del self.running[task_id]
            finished.append(task_id)
            if code == EXIT_CANNOT_START:
                self.spawn_failed_after_exit(run, code)
                continue
            self.failures = 0
            self.give_back_if_held(run, code)
        return finished

    def spawn_failed_after_exit(self, run: Running, code: int) -> None:
        task = self.board.show(run.lease.task_id)
        if task.lease_token == run.lease.token and task.status in HELD:
            self.spawn_failed(run.lease, f"the worker exited with code {code} before starting")
        else:
            self.failures += 1

    def give_back_if_held(self, run: Running, code: int) -> None:
        task = self.board.show(run.lease.task_id)
        if task.lease_token != run.lease.token or task.status not in HELD:
            log.info("kanban: task %d worker exited (%d); task is %s", task.id, code, task.status)
            return
        how = f"was killed by signal {-code}" if code < 0 else f"exited with code {code}"
        try:
            self.board.release(
                run.lease,
                f"worker process {run.proc.pid} on {self.host} {how} without reporting",
                author=self.owner.name,
            )
        except KanbanError as exc:
            log.warning("kanban: could not give back task %d: %s", task.id, exc)

    # ---- running -------------------------------------------------------------------------

    def run(self, stop: threading.Event, *, once: bool = False) -> None:
        log.info(
            "kanban dispatcher on %s (%s board, up to %d workers)",
            self.host,
            self.board.backend,
            self.section.max_workers,
        )
        while not stop.is_set():
            try:
                self.round()
            except KanbanError as exc:
                log.error("kanban dispatcher: %s (retrying)", exc)
            if once:
                self.wait_for_workers(stop)
                return
            stop.wait(self.section.poll_seconds)
        if self.running:
            log.info(
                "kanban dispatcher stopping; %d worker(s) keep running and finish alone",
                len(self.running),
            )

    def wait_for_workers(self, stop: threading.Event) -> None:
        while self.running and not stop.is_set():
            stop.wait(0.2)
            self.reap()

    def close(self) -> None:
        self.board.close()


@contextmanager
def gateway_dispatcher(settings: Settings) -> Iterator[Dispatcher | None]:
    """The dispatcher on a thread for the life of `herald gateway run` (when
    `kanban.in_gateway`); a board that cannot open is logged, not fatal."""
    if not settings.config.kanban.in_gateway:
        yield None
        return
    try:
        dispatcher = Dispatcher(settings)
    except KanbanError as exc:
        log.error("kanban dispatcher not started: %s", exc)
        yield None
        return
    stop = threading.Event()
    thread = threading.Thread(
        target=dispatcher.run, args=(stop,), name="kanban-dispatcher", daemon=True
    )
    thread.start()
    try:
        yield dispatcher
    finally:
        stop.set()
        thread.join(timeout=10)
        dispatcher.close()
