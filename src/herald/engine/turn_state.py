"""Per-turn bookkeeping shared by the stages of one turn."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from herald.engine.budget import IterationBudget
from herald.engine.result import ExitReason
from herald.providers import Usage

if TYPE_CHECKING:
    from herald.engine.economics import RequestSplit


@dataclass
class TurnState:
    budget: IterationBudget
    api_calls: int = 0
    usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = None
    exit_reason: ExitReason = ExitReason.UNKNOWN
    final_text: str = ""
    error: str | None = None
    tool_iterations: int = 0
    started_at: float = field(default_factory=time.time)
    # The split of the request being made (recorded on its usage row) and the turn
    # caps' warnings already given.
    request_split: RequestSplit | None = None
    spend_warnings: set[tuple[str, float]] = field(default_factory=set)
    spend_cap: str | None = None  # the cap that refused a call ("budget.turn_usd")

    def add_cost(self, cost: float | None) -> None:
        if cost is not None:
            self.cost_usd = (self.cost_usd or 0.0) + cost

    def end(self, reason: ExitReason, *, text: str = "", error: str | None = None) -> None:
        self.exit_reason = reason
        if text:
            self.final_text = text
        if error:
            self.error = error
