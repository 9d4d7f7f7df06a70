"""Liveness by traffic, not by process: what each adapter actually did, and when.

Every adapter owns one `HealthRecorder` (``adapter.health``) and reports into it:
`received()` when its platform handed it something (a long poll returned, even
empty; a websocket event; a webhook accepted), `sent()` when a send landed,
`error(reason)` for a failed poll, send or connection, `reconnecting(reason)` when it
lost its connection and is getting it back, and `heartbeat_ack()` when a websocket
heartbeat was acknowledged. The adapter declares its expected rhythm once
(`Rhythm`, from ``adapter.expected_rhythm()``): how long silence may last before the
connection must be presumed dead (a long poll's timeout plus slack; a websocket's
heartbeat interval plus slack).

`assess()` turns what was recorded into a `PlatformHealth` (``ok``, ``degraded``,
``reconnecting`` or ``down`` with the reason); the watchdog acts on it and
`herald gateway status` shows it. The recorder is cheap and thread-safe: library
callbacks may run on other threads.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Literal

HealthState = Literal["starting", "ok", "degraded", "reconnecting", "down", "stopped"]
RhythmKind = Literal["long_poll", "websocket", "served"]

RESTART_WINDOW = 3600.0  # "restarts in the last hour"
DEGRADED_AFTER_ERRORS = 1
DOWN_AFTER_ERRORS = 5
_MAX_REASON = 200


@dataclass(frozen=True)
class Rhythm:
    """How often an adapter's platform must be heard from while the link is alive.

    ``silence_limit`` is the longest gap between two signs of life (a receive, or a
    heartbeat ack for websockets) before the link is presumed dead; None means the
    platform only speaks when spoken to (an HTTP server waiting for requests), so
    silence proves nothing and only errors count."""

    kind: RhythmKind
    silence_limit: float | None

    @classmethod
    def long_poll(cls, timeout: float, slack: float) -> Rhythm:
        """A long poll returns within its timeout (empty if nothing happened)."""
        return cls("long_poll", timeout + slack)

    @classmethod
    def websocket(cls, heartbeat_interval: float, slack: float) -> Rhythm:
        """A websocket's heartbeat is acknowledged once per interval."""
        return cls("websocket", heartbeat_interval + slack)

    @classmethod
    def served(cls) -> Rhythm:
        return cls("served", None)

    def describe(self) -> str:
        if self.silence_limit is None:
            return "answers requests"
        what = "a poll returns" if self.kind == "long_poll" else "a heartbeat is acknowledged"
        return f"{what} every {self.silence_limit:.0f} s at most"


@dataclass
class PlatformHealth:
    """One platform's state as `herald gateway status` shows it."""

    platform: str
    state: HealthState
    reason: str = ""
    rhythm: str = ""
    last_receive: float | None = None
    last_send: float | None = None
    last_heartbeat_ack: float | None = None
    last_error: str | None = None
    last_error_at: float | None = None
    consecutive_errors: int = 0
    reconnects: int = 0
    restarts_last_hour: int = 0
    since: float | None = None  # when it entered this state (down/reconnecting: the outage)
    undelivered: int = 0  # filled in by whoever reads the delivery ledger
    # what else the platform wants shown (Matrix: its device and verification state)
    details: dict[str, str] = field(default_factory=dict)
    # the error that made this run of errors `degraded`, while the run lasts: a watchdog
    # pass that finds `down` straight after `ok` knows the platform went through it
    degraded_by: str | None = None

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass
class _Record:
    started_at: float
    last_receive: float | None = None
    last_send: float | None = None
    last_heartbeat_ack: float | None = None
    last_error: str | None = None
    last_error_at: float | None = None
    consecutive_errors: int = 0
    degraded_by: str | None = None  # the error that began this run of errors
    reconnects: int = 0
    reconnecting: str | None = None  # the reason, while reconnecting
    stopped: bool = False
    restarts: deque[float] = field(default_factory=deque)
    details: dict[str, str] = field(default_factory=dict)


class HealthRecorder:
    def __init__(
        self,
        platform: str,
        rhythm: Rhythm,
        *,
        clock: Callable[[], float] = time.time,
        degraded_after_errors: int = DEGRADED_AFTER_ERRORS,
        down_after_errors: int = DOWN_AFTER_ERRORS,
    ) -> None:
        self.platform = platform
        self.rhythm = rhythm
        self.clock = clock
        self.degraded_after_errors = degraded_after_errors
        self.down_after_errors = down_after_errors
        self._lock = threading.Lock()
        self._record = _Record(started_at=clock())
        self._state: HealthState = "starting"
        self._since = self._record.started_at

    # ---- what adapters report -----------------------------------------------------------------

    def received(self) -> None:
        """The platform handed us something: the link works."""
        with self._lock:
            r = self._record
            r.last_receive = self.clock()
            r.consecutive_errors = 0
            r.reconnecting = None
            r.stopped = False

    def heartbeat_ack(self) -> None:
        with self._lock:
            r = self._record
            r.last_heartbeat_ack = self.clock()
            r.reconnecting = None
            r.stopped = False

    def sent(self) -> None:
        with self._lock:
            self._record.last_send = self.clock()

    def error(self, reason: str) -> None:
        with self._lock:
            r = self._record
            r.consecutive_errors += 1
            r.last_error = _short(reason)
            r.last_error_at = self.clock()
            if r.consecutive_errors == self.degraded_after_errors:
                r.degraded_by = r.last_error

    def reconnecting(self, reason: str = "reconnecting") -> None:
        with self._lock:
            r = self._record
            r.reconnects += 1
            r.reconnecting = _short(reason)

    # ---- what the gateway reports -------------------------------------------------------------

    def restarted(self) -> None:
        """The watchdog restarted the adapter: the new link has not failed yet, and its
        silence clock starts again (the next verdict is about the new link)."""
        with self._lock:
            r = self._record
            now = self.clock()
            r.restarts.append(now)
            r.started_at = now
            r.consecutive_errors = 0
            r.reconnecting = "restarted; waiting for traffic"  # until something arrives
            r.stopped = False

    def connected(self) -> None:
        """connect() returned: the silence clock starts now."""
        with self._lock:
            self._record.started_at = self.clock()
            self._record.stopped = False

    def stopped(self) -> None:
        with self._lock:
            self._record.stopped = True

    def describe(self, details: dict[str, str]) -> None:
        """State the platform wants shown beside its health (short values, no secrets)."""
        with self._lock:
            self._record.details = {str(k): _short(str(v)) for k, v in details.items()}

    # ---- reading ------------------------------------------------------------------------------

    def last_alive(self) -> float:
        """The newest sign of life (or the start, before any)."""
        with self._lock:
            r = self._record
            return max(t for t in (r.started_at, r.last_receive, r.last_heartbeat_ack) if t)

    def assess(self) -> PlatformHealth:
        """The state now, judged from traffic against the declared rhythm."""
        with self._lock:
            r = self._record
            now = self.clock()
            while r.restarts and now - r.restarts[0] > RESTART_WINDOW:
                r.restarts.popleft()
            alive = max(t for t in (r.started_at, r.last_receive, r.last_heartbeat_ack) if t)
            limit = self.rhythm.silence_limit
            state: HealthState
            if r.stopped:
                state, reason = "stopped", "disconnected"
            elif limit is not None and now - alive > limit:
                heard = "nothing received" if r.last_receive is None else "no traffic"
                reason = f"{heard} for {now - alive:.0f} s ({self.rhythm.describe()})"
                if r.last_error and r.last_error_at and r.last_error_at >= alive:
                    reason += f"; last error: {r.last_error}"
                state = "down"
            elif r.consecutive_errors >= self.down_after_errors:
                state, reason = "down", f"{r.consecutive_errors} errors in a row: {r.last_error}"
            elif r.reconnecting is not None:
                state, reason = "reconnecting", r.reconnecting
            elif r.consecutive_errors >= self.degraded_after_errors:
                state, reason = "degraded", f"{r.last_error}"
            elif r.last_receive is None and limit is not None:
                state, reason = "starting", "waiting for the first receive"
            else:
                state, reason = "ok", ""
            if _kind(state) != _kind(self._state):  # down ↔ reconnecting: one outage
                self._since = now
            self._state = state
            return PlatformHealth(
                platform=self.platform,
                state=state,
                reason=reason,
                rhythm=self.rhythm.describe(),
                last_receive=r.last_receive,
                last_send=r.last_send,
                last_heartbeat_ack=r.last_heartbeat_ack,
                last_error=r.last_error,
                last_error_at=r.last_error_at,
                consecutive_errors=r.consecutive_errors,
                reconnects=r.reconnects,
                restarts_last_hour=len(r.restarts),
                since=self._since,
                details=dict(r.details),
                degraded_by=(
                    r.degraded_by if r.consecutive_errors >= self.degraded_after_errors else None
                ),
            )


def _kind(state: HealthState) -> str:
    return "broken" if state in ("down", "reconnecting") else state


def _short(reason: str) -> str:
    from herald.safety import redact

    line = " ".join(redact(str(reason)).split()) or "unknown error"
    return line if len(line) <= _MAX_REASON else line[: _MAX_REASON - 1] + "…"


__all__ = ["RESTART_WINDOW", "HealthRecorder", "HealthState", "PlatformHealth", "Rhythm"]
