"""The iteration budget: how many model calls a turn may make.

Every request that reaches the provider costs one iteration; a request that
was never sent, or a retry after compression, is refunded. A budget may have a
parent (a sub-agent draws from its parent's budget too), so a turn can stop
either because its own allowance ran out or because the shared one did.
"""

from __future__ import annotations

import threading
from typing import Literal


class IterationBudget:
    def __init__(self, max_iterations: int, parent: IterationBudget | None = None):
        if max_iterations < 1:
            raise ValueError("max_iterations must be at least 1")
        self.max_iterations = max_iterations
        self.parent = parent
        self._used = 0
        self._lock = threading.Lock()

    @property
    def used(self) -> int:
        return self._used

    @property
    def remaining(self) -> int:
        own = self.max_iterations - self._used
        return min(own, self.parent.remaining) if self.parent else own

    def try_consume(self) -> bool:
        with self._lock:
            if self._used >= self.max_iterations:
                return False
            if self.parent is not None and not self.parent.try_consume():
                return False
            self._used += 1
            return True

    def refund(self) -> None:
        with self._lock:
            if self._used > 0:
                self._used -= 1
                if self.parent is not None:
                    self.parent.refund()

    def exhausted_by(self) -> Literal["own", "parent", None]:
        if self._used >= self.max_iterations:
            return "own"
        if self.parent is not None and self.parent.remaining <= 0:
            return "parent"
        return None
