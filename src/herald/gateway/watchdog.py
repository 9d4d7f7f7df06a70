"""The watchdog: proves each platform alive by its traffic and acts when it is not.

Every `check_every` seconds it asks each adapter's `HealthRecorder` for its state
(judged against the rhythm the adapter declared), and:

- restarts a platform that is ``down`` — that adapter alone, through
  `adapter.reconnect(runner)`, which keeps the dispatches (turns) in flight — with
  exponential backoff between attempts (`gateway.watchdog.restart_backoff` doubling up
  to `restart_backoff_max`), so a platform that stays unreachable is not hammered;
- tells the owner once, through the home channel (`gateway.home_channel`, another
  platform that is working), when a platform has been down for longer than
  `gateway.down_notice_after`, and once more when it is back;
- retries the replies still owed in the outbox (a send that failed, a platform that
  was down) with backoff, through the delivery ledger, so no part is sent twice;
- keeps the transitions (``telegram: ok → down (no traffic for 41 s)``) for
  `herald gateway status` and the dashboard.

Who can reach it: nobody but the gateway process; it reads config the owner wrote
and the platforms' own traffic. The notices it sends carry only platform names,
states and redacted error reasons, to the one chat the owner named.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from herald.gateway.aio import end_task
from herald.gateway.delivery import Target, notice_key
from herald.gateway.health import HealthState, PlatformHealth

if TYPE_CHECKING:
    from herald.config.schema_gateway import GatewayConfig
    from herald.gateway.contracts import PlatformAdapter
    from herald.gateway.runner import GatewayRunner

log = logging.getLogger(__name__)

MAX_TRANSITIONS = 50
MAX_UNDELIVERED_SHOWN = 20
PREVIEW_CHARS = 60
_BROKEN: frozenset[HealthState] = frozenset({"down", "reconnecting"})


@dataclass
class _Restarts:
    attempts: int = 0  # since the platform was last ok: each one doubles the next wait
    next_at: float = 0.0
    task: asyncio.Task[None] | None = None


@dataclass
class _Outage:
    since: float
    reason: str
    noticed: bool = False
    unreachable_warned: bool = False


@dataclass
class Transition:
    at: float
    platform: str
    before: str
    after: str
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "at": self.at,
            "platform": self.platform,
            "from": self.before,
            "to": self.after,
            "reason": self.reason,
        }


@dataclass
class Watchdog:
    runner: GatewayRunner
    config: GatewayConfig
    clock: Callable[[], float] = time.time
    transitions: deque[Transition] = field(default_factory=lambda: deque(maxlen=MAX_TRANSITIONS))
    _last: dict[str, str] = field(default_factory=dict)
    _restarts: dict[str, _Restarts] = field(default_factory=dict)
    _outages: dict[str, _Outage] = field(default_factory=dict)
    _retrying: asyncio.Task[None] | None = None
    _notices: set[asyncio.Task[bool]] = field(default_factory=set)

    # ---- one pass (herald.gateway.lifecycle runs it every watchdog.check_every s) -----------------------------------------------------------------------------

    def check(self) -> list[PlatformHealth]:
        """One pass: assess, restart what is down, notify, start owed retries."""
        now = self.clock()
        report = []
        for adapter in list(self.runner.adapters.values()):
            health = adapter.health.assess()
            self._note_transition(health, now)
            self._track_outage(adapter, health, now)
            if health.state == "down" and self.config.watchdog.enabled:
                self._maybe_restart(adapter, health, now)
            elif health.state == "ok" and adapter.name in self._restarts:
                self._restarts[adapter.name].attempts = 0  # traffic again: backoff resets
            report.append(health)
        if self._retrying is None or self._retrying.done():
            self._retrying = asyncio.ensure_future(self.retry_owed())
        return report

    async def stop(self) -> None:
        tasks = [r.task for r in self._restarts.values() if r.task is not None]
        tasks += [self._retrying] if self._retrying is not None else []
        # end_task: a restart inside a platform's handshake can drop a plain cancel.
        await asyncio.gather(*(end_task(task) for task in tasks))

    # ---- status -------------------------------------------------------------------------------

    def snapshot(self) -> list[PlatformHealth]:
        """Every platform's state with its undelivered replies counted."""
        owed: dict[str, int] = {}
        try:
            for reply in self.runner.outbox.undelivered():
                owed[reply.platform] = owed.get(reply.platform, 0) + 1
        except Exception as exc:  # the store is closing
            log.debug("could not count undelivered replies: %s", exc)
        result = []
        for adapter in self.runner.adapters.values():
            health = adapter.health.assess()
            health.undelivered = owed.get(adapter.name, 0)
            result.append(health)
        return result

    def report(self) -> dict[str, Any]:
        """For status pages (the file behind `herald gateway status`, the dashboard):
        platforms, recent transitions and the oldest replies still owed."""
        return {
            "platforms": [h.to_dict() for h in self.snapshot()],
            "transitions": [t.to_dict() for t in self.transitions],
            "undelivered": self.undelivered(),
        }

    def undelivered(self, limit: int = MAX_UNDELIVERED_SHOWN) -> list[dict[str, Any]]:
        """The oldest owed replies: where, since when, tries, last error, a preview."""
        try:
            owed = self.runner.outbox.undelivered()[:limit]
        except Exception as exc:  # the store is closing
            log.debug("could not list undelivered replies: %s", exc)
            return []
        return [
            {
                "platform": r.platform,
                "chat_id": r.chat_id,
                "created_at": r.created_at,
                "attempts": r.attempts,
                "next_attempt_at": r.next_attempt_at,
                "last_error": r.last_error or "",
                "preview": _preview(r.text),
            }
            for r in owed
        ]

    def _note_transition(self, health: PlatformHealth, now: float) -> None:
        before = self._last.get(health.platform)
        if before == health.state:
            return
        self._last[health.platform] = health.state
        if before in (None, "starting") and health.state in ("starting", "ok"):
            return  # a platform coming up as expected is not news
        if before in (None, "starting", "ok") and health.state == "down" and health.degraded_by:
            # errors piled up between two passes (or before the first): it was degraded
            # on the way down
            self._record_transition(
                now, health.platform, before or "-", "degraded", health.degraded_by
            )
            before = "degraded"
        self._record_transition(now, health.platform, before or "-", health.state, health.reason)

    def _record_transition(
        self, now: float, platform: str, before: str, state: str, reason: str
    ) -> None:
        self.transitions.append(Transition(now, platform, before, state, reason))
        level = logging.INFO if state in ("ok", "degraded") else logging.WARNING
        log.log(
            level,
            "platform %s: %s → %s%s",
            platform,
            before,
            state,
            f" ({reason})" if reason else "",
        )

    # ---- restarts -----------------------------------------------------------------------------

    def _maybe_restart(self, adapter: PlatformAdapter, health: PlatformHealth, now: float) -> None:
        restarts = self._restarts.setdefault(adapter.name, _Restarts())
        if restarts.task is not None and not restarts.task.done():
            return
        if now < restarts.next_at:
            return
        restarts.task = asyncio.ensure_future(self._restart(adapter, health.reason, restarts))

    async def _restart(self, adapter: PlatformAdapter, reason: str, restarts: _Restarts) -> None:
        """One attempt. Until traffic flows again every attempt doubles the wait before
        the next, whether it raised or reconnected into another silence."""
        settings = self.config.watchdog
        restarts.attempts += 1
        wait = min(
            settings.restart_backoff * 2 ** min(restarts.attempts - 1, 20),
            settings.restart_backoff_max,
        )
        restarts.next_at = self.clock() + wait
        log.warning("restarting platform %s: %s", adapter.name, reason)
        try:
            await adapter.reconnect(self.runner)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            restarts.next_at = self.clock() + wait
            adapter.health.error(f"restart failed: {exc}")
            log.warning(
                "platform %s did not restart (%s); next try in %.0f s", adapter.name, exc, wait
            )
            return
        adapter.health.restarted()
        log.info("platform %s restarted; waiting for traffic", adapter.name)

    # ---- the owner's notices ------------------------------------------------------------------

    def _track_outage(self, adapter: PlatformAdapter, health: PlatformHealth, now: float) -> None:
        outage = self._outages.get(adapter.name)
        if health.state in _BROKEN:
            if outage is None:
                self._outages[adapter.name] = _Outage(since=now, reason=health.reason)
                return
            outage.reason = health.reason or outage.reason
            if not outage.noticed and now - outage.since >= self.config.down_notice_after:
                outage.noticed = self._notify(
                    outage,
                    adapter.name,
                    f"⚠️ Herald's {adapter.name} connection has been down for "
                    f"{_duration(now - outage.since)}: {outage.reason}. Herald keeps "
                    "reconnecting; messages sent there meanwhile are answered once it is back.",
                )
        elif health.state == "ok" and outage is not None:
            del self._outages[adapter.name]
            if outage.noticed:
                self._notify(
                    outage,
                    adapter.name,
                    f"✅ Herald's {adapter.name} connection is back after "
                    f"{_duration(now - outage.since)}.",
                )

    def _notify(self, outage: _Outage, about: str, text: str) -> bool:
        """Send `text` to the home channel if it is another platform that works now.
        True when a send was started (the notice is owed from then on, in the outbox)."""
        channel = self.config.home_channel
        if not channel:
            return False
        platform, _, chat = channel.partition(":")
        adapter = self.runner.adapters.get(platform)
        if platform == about or adapter is None or not adapter.push_replies:
            if not outage.unreachable_warned:  # once per outage, not on every check
                outage.unreachable_warned = True
                log.warning(
                    "cannot tell the owner about %s: the home channel %s is %s",
                    about,
                    channel,
                    "on that platform" if platform == about else "not a connected chat platform",
                )
            return False
        if adapter.health.assess().state not in ("ok", "degraded"):
            return False  # try again on the next check
        task = asyncio.ensure_future(
            self.runner.deliver_text(platform, chat, text, key=f"{notice_key()}:{about}")
        )
        self._notices.add(task)
        task.add_done_callback(self._notices.discard)
        return True

    # ---- replies still owed -------------------------------------------------------------------

    async def retry_owed(self) -> int:
        """Deliver the owed replies whose retry time has come; the count delivered."""
        settings = self.config.watchdog
        now = self.clock()
        delivered = 0
        for owed in self.runner.outbox.due(now):
            if now - owed.created_at > settings.delivery_give_up_after:
                log.warning(
                    "giving up on %s after %s", owed.delivery_key, _duration(now - owed.created_at)
                )
                self.runner.outbox.settle(owed.delivery_key, "dead", error="gave up")
                continue
            adapter = self.runner.adapters.get(owed.platform)
            if adapter is None or not adapter.push_replies:
                continue
            if adapter.health.assess().state in _BROKEN:
                continue  # it comes back first; the reply keeps its place
            target = Target(owed.platform, owed.chat_id, owed.thread_id, owed.reply_to)
            report = await self.runner.deliverer.deliver(
                adapter, target, owed.text, key=owed.delivery_key
            )
            if report.ok:
                delivered += 1
                log.info("delivered %s on retry %d", owed.delivery_key, owed.attempts)
        return delivered


def _preview(text: str) -> str:
    line = " ".join(text.split())  # stored redacted
    return line if len(line) <= PREVIEW_CHARS else line[: PREVIEW_CHARS - 1] + "…"


def _duration(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{seconds // 60} min"
    return f"{seconds // 3600} h {seconds % 3600 // 60} min"


__all__ = ["Transition", "Watchdog"]
