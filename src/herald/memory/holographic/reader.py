"""`FactReader`: the read side of `FactStore` that search, analysis and the
contradiction check use.

The store calls those modules (with itself) and so imports them; they name the
store only through this protocol, so none of them imports the store back.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from herald.memory.holographic.hrr import Superposition
    from herald.memory.holographic.records import Fact


class FactReader(Protocol):
    dimension: int
    min_trust: float
    clock: Callable[[], float]

    def read(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        """Run one read-only statement."""
        ...

    def get(self, fact_id: int) -> Fact | None: ...

    def load_facts(self, ids: Sequence[int]) -> dict[int, Fact]: ...

    def category_bundle(self, category: str) -> tuple[Superposition, Superposition, int] | None:
        """(phasor sum of the category's facts, entity-association sum, fact count)."""
        ...

    def decay_at(
        self, updated_at: float, last_used_at: float | None, now: float | None = None
    ) -> float: ...
