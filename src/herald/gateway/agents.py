"""The agent cache: one live `Agent` per active session, reused across messages.

An agent holds the session's frozen prompt, its tool state (approved commands,
background processes, todo list) and an open model client, so rebuilding it for
every message would waste work and lose state. Entries are dropped when idle for
`idle_seconds`, and the least recently used are dropped beyond `max_agents` (the
memory-pressure bound). An entry whose turn is running is pinned and never dropped.
A dropped agent is closed; the session itself lives on in state.db and a later
message rebuilds the agent from there.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

log = logging.getLogger(__name__)


class Closable(Protocol):
    session_id: str | None

    def close(self) -> None: ...


@dataclass
class CachedAgent:
    agent: Any  # herald.engine.Agent (kept loose so tests can cache any Closable)
    profile: str
    last_used: float
    pinned: int = 0


class AgentCache:
    def __init__(
        self,
        *,
        max_agents: int,
        idle_seconds: float,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.max_agents = max_agents
        self.idle_seconds = idle_seconds
        self.clock = clock
        self._entries: OrderedDict[str, CachedAgent] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: str) -> bool:
        return key in self._entries

    def get(self, key: str) -> CachedAgent | None:
        entry = self._entries.get(key)
        if entry is not None:
            entry.last_used = self.clock()
            self._entries.move_to_end(key)
        return entry

    def put(self, key: str, agent: Closable, profile: str) -> CachedAgent:
        old = self._entries.pop(key, None)
        if old is not None and old.agent is not agent:
            _close(key, old.agent)
        entry = CachedAgent(agent, profile, self.clock())
        self._entries[key] = entry
        self.evict()
        return entry

    def pin(self, key: str) -> None:
        entry = self._entries.get(key)
        if entry is not None:
            entry.pinned += 1
            entry.last_used = self.clock()

    def unpin(self, key: str) -> None:
        entry = self._entries.get(key)
        if entry is not None:
            entry.pinned = max(0, entry.pinned - 1)
            entry.last_used = self.clock()

    def discard(self, key: str) -> bool:
        """Drop and close one entry (e.g. `/new`); False if it is absent or pinned."""
        entry = self._entries.get(key)
        if entry is None or entry.pinned:
            return False
        del self._entries[key]
        _close(key, entry.agent)
        return True

    def evict(self) -> list[str]:
        """Drop idle entries, then the least recently used beyond the cap."""
        now = self.clock()
        dropped = [
            key
            for key, entry in self._entries.items()
            if not entry.pinned and now - entry.last_used >= self.idle_seconds
        ]
        for key in dropped:
            _close(key, self._entries.pop(key).agent)
        if dropped:
            log.info("dropped %d idle agent(s)", len(dropped))
        over = len(self._entries) - self.max_agents
        if over > 0:
            victims = [key for key, entry in self._entries.items() if not entry.pinned][:over]
            for key in victims:
                _close(key, self._entries.pop(key).agent)
            if victims:
                log.info(
                    "dropped %d least recently used agent(s) (cap %d)",
                    len(victims),
                    self.max_agents,
                )
            dropped += victims
        return dropped

    def keys(self) -> list[str]:
        return list(self._entries)

    def close_all(self) -> None:
        entries, self._entries = self._entries, OrderedDict()
        for key, entry in entries.items():
            _close(key, entry.agent)


def _close(key: str, agent: Closable) -> None:
    try:
        agent.close()
    except Exception as exc:  # closing is best effort; the session is safe in state.db
        log.warning("closing the agent of %s failed: %s", key, exc)


__all__ = ["AgentCache", "CachedAgent", "Closable"]
