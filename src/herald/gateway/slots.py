"""`SessionSlot`: one session's place in the gateway — its queue of work, the worker
task draining it, the turn running now and the chat prompts waiting for an answer.

The runner owns the slots; the slash commands read them. Both import this module,
so neither needs the other's.
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass, field

from herald.gateway.approvals import ChatPrompts
from herald.gateway.turns import ActiveTurn, WorkItem


@dataclass
class SessionSlot:
    key: str
    profile: str
    queue: deque[WorkItem] = field(default_factory=deque)
    worker: asyncio.Task[None] | None = None
    turn: ActiveTurn | None = None
    prompts: ChatPrompts = field(default_factory=ChatPrompts)

    @property
    def busy(self) -> bool:
        return self.worker is not None
