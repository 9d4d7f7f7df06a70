"""Long-running schedulers: `run_daemon` (``herald cron daemon``, for users without a
gateway) and `GatewayCron` (inside ``herald gateway run``). Both write a heartbeat
row (pid, host, time) every tick, which is how ``herald cron list`` and the
``cronjob`` tool know whether anything will run the jobs of this home.

`GatewayCron` also delivers the outbox: results queued for a platform while no
gateway ran go out when it starts, and failed sends are retried every tick.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from herald.cron.scheduler import Scheduler
from herald.cron.store import CronStore, SchedulerBeat
from herald.cron.targets import Sender, flush_outbox

if TYPE_CHECKING:
    from herald.config import HeraldHome, Settings
    from herald.tools import ToolRegistry

log = logging.getLogger("herald.cron")

STOP_WAIT_SECONDS = 60.0
HOW_TO_START = (
    "start one with `herald gateway run` (it runs the scheduler too) or `herald cron daemon`, "
    "or call `herald cron tick` every minute from system cron or a systemd timer"
)


@dataclass(frozen=True)
class SchedulerStatus:
    running: bool
    schedulers: tuple[SchedulerBeat, ...]
    message: str


def scheduler_status(store: CronStore) -> SchedulerStatus:
    beats = tuple(store.schedulers())
    if beats:
        names = ", ".join(f"{b.kind} (pid {b.pid})" for b in beats)
        return SchedulerStatus(True, beats, f"a scheduler is running for this home: {names}")
    return SchedulerStatus(
        False,
        (),
        "no scheduler is running for this home, so jobs will not run until one starts: "
        + HOW_TO_START,
    )


def run_daemon(
    settings: Settings,
    *,
    stop: threading.Event,
    tools: ToolRegistry,
    interval: float | None = None,
) -> None:
    """Tick every `interval` seconds (default `cron.tick_seconds`) until `stop` is set;
    the jobs' agents use `tools`."""
    every = interval or settings.config.cron.tick_seconds
    with CronStore.for_home(settings.home) as store:
        scheduler = Scheduler(settings, store, tools=tools, kind="daemon")
        started = time.time()
        log.info("cron daemon started (pid holder %s, every %.0f s)", scheduler.holder, every)
        watcher = threading.Thread(target=_forward, args=(stop, scheduler.cancel), daemon=True)
        watcher.start()
        try:
            while not stop.is_set():
                store.beat(scheduler.holder, "daemon", every, started)
                scheduler.tick()
                store.beat(scheduler.holder, "daemon", every, started)
                stop.wait(every)
        finally:
            store.end_beat(scheduler.holder)
            log.info("cron daemon stopped")


def _forward(stop: threading.Event, cancel: threading.Event) -> None:
    stop.wait()
    cancel.set()


class GatewayCron:
    """The scheduler and outbox courier of a running gateway."""

    def __init__(self, settings: Settings, send: Sender, *, tools: ToolRegistry) -> None:
        self.settings = settings
        self.send = send
        self.tools = tools
        self.every = settings.config.cron.tick_seconds
        self._task: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self.store: CronStore | None = None
        self.scheduler: Scheduler | None = None

    @property
    def home(self) -> HeraldHome:
        return self.settings.home

    def start(self) -> None:
        self.store = CronStore.for_home(self.home)
        self.scheduler = Scheduler(self.settings, self.store, tools=self.tools, kind="gateway")
        self._task = asyncio.ensure_future(self._loop())

    async def _loop(self) -> None:
        assert self.store is not None and self.scheduler is not None
        started = time.time()
        while not self._stop.is_set():
            try:
                self.store.beat(self.scheduler.holder, "gateway", self.every, started)
                await flush_outbox(self.store, self.home, self.send)
                await asyncio.to_thread(self.scheduler.tick)
                await flush_outbox(self.store, self.home, self.send)
            except Exception:
                log.exception("the gateway's cron scheduler hit an error; trying again")
            try:
                await asyncio.wait_for(self._stop.wait(), self.every)
            except TimeoutError:
                pass

    async def stop(self) -> None:
        """Stop ticking; a job still running is interrupted (and recorded as such)."""
        self._stop.set()
        if self.scheduler is not None:
            self.scheduler.cancel.set()
        if self._task is not None:
            try:
                await asyncio.wait_for(self._task, STOP_WAIT_SECONDS)
            except (TimeoutError, asyncio.CancelledError):
                self._task.cancel()
        if self.store is not None and self.scheduler is not None:
            self.store.end_beat(self.scheduler.holder)
            self.store.close()


__all__ = ["HOW_TO_START", "GatewayCron", "SchedulerStatus", "run_daemon", "scheduler_status"]
