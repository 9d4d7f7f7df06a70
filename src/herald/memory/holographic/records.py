"""What the fact store hands out: facts, ranked hits, likely contradictions."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class NewFact:
    """A fact to add (see FactStore.add_many)."""

    content: str
    category: str | None = None
    entities: Sequence[str] = ()


@dataclass(frozen=True)
class Fact:
    id: int
    content: str
    category: str
    trust: float
    created_at: float
    updated_at: float
    last_used_at: float | None = None
    helpful_count: int = 0
    unhelpful_count: int = 0
    entities: tuple[str, ...] = ()

    @classmethod
    def from_row(cls, row: sqlite3.Row, entities: tuple[str, ...] = ()) -> Fact:
        return cls(
            id=int(row["id"]),
            content=row["content"],
            category=row["category"],
            trust=float(row["trust"]),
            created_at=float(row["created_at"]),
            updated_at=float(row["updated_at"]),
            last_used_at=None if row["last_used_at"] is None else float(row["last_used_at"]),
            helpful_count=int(row["helpful_count"]),
            unhelpful_count=int(row["unhelpful_count"]),
            entities=entities,
        )

    def brief(self) -> dict[str, Any]:
        """The compact form tool results use."""
        return {
            "id": self.id,
            "content": self.content,
            "category": self.category,
            "trust": round(self.trust, 2),
        }


@dataclass(frozen=True)
class FactHit:
    """A fact and why it ranked: `parts` holds the score's ingredients."""

    fact: Fact
    score: float
    parts: dict[str, float] = field(default_factory=dict)

    def brief(self) -> dict[str, Any]:
        return {**self.fact.brief(), "score": round(self.score, 3)}


@dataclass(frozen=True)
class AddResult:
    fact: Fact
    created: bool  # False: an existing fact said the same and had its trust raised


@dataclass(frozen=True)
class Contradiction:
    first: Fact
    second: Fact
    score: float
    reason: str  # "negation" | "number" | "value"

    def brief(self) -> dict[str, Any]:
        return {
            "a": self.first.brief(),
            "b": self.second.brief(),
            "reason": self.reason,
            "score": round(self.score, 3),
        }
