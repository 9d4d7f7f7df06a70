"""Per-category bundles, kept as running phasor sums so facts can leave again.

For each category the store keeps two superpositions: `vector`, the sum of its
facts' phasors (normalised, it resembles every fact of the category), and
`associations`, the sum of bind(entity atom, fact vector) over every fact's
entities. Unbinding an entity atom from the associations leaves the sum of the
vectors of the facts about that entity, plus noise from the rest: that is
what `probe` ranks a category's facts against.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

import herald.memory.holographic.hrr as hrr
from herald.memory.holographic.encoding import entity_atom


@dataclass
class _Delta:
    vector: hrr.Superposition
    associations: hrr.Superposition
    count: int = 0


class BundleDeltas:
    """Changes to category bundles collected in memory, written once per transaction."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self._deltas: dict[str, _Delta] = {}

    def _delta(self, category: str) -> _Delta:
        delta = self._deltas.get(category)
        if delta is None:
            empty = hrr.empty_superposition(self.dim)
            delta = self._deltas[category] = _Delta(empty, hrr.empty_superposition(self.dim))
        return delta

    def add(
        self, category: str, vector: hrr.Vector, entities: Sequence[str], sign: int = 1
    ) -> None:
        """Record a fact joining (sign=1) or leaving (sign=-1) `category`."""
        delta = self._delta(category)
        delta.vector = hrr.add_to(delta.vector, vector, float(sign))
        for entity in entities:
            pair = hrr.bind(entity_atom(entity, self.dim), vector)
            delta.associations = hrr.add_to(delta.associations, pair, float(sign))
        delta.count += sign

    def remove(self, category: str, vector: hrr.Vector, entities: Sequence[str]) -> None:
        self.add(category, vector, entities, sign=-1)

    def apply(self, conn: sqlite3.Connection) -> None:
        for category, delta in self._deltas.items():
            rows = conn.execute(
                "SELECT vector, associations, count FROM category_bundles WHERE category = ?",
                (category,),
            ).fetchall()
            if rows:
                vector = _plus(hrr.decode_superposition(rows[0][0]), delta.vector)
                associations = _plus(hrr.decode_superposition(rows[0][1]), delta.associations)
                count = int(rows[0][2]) + delta.count
            else:
                vector, associations, count = delta.vector, delta.associations, delta.count
            if count <= 0:
                conn.execute("DELETE FROM category_bundles WHERE category = ?", (category,))
                continue
            conn.execute(
                "INSERT INTO category_bundles (category, vector, associations, count)"
                " VALUES (?, ?, ?, ?) ON CONFLICT(category) DO UPDATE SET"
                " vector = excluded.vector, associations = excluded.associations,"
                " count = excluded.count",
                (
                    category,
                    hrr.encode_superposition(vector),
                    hrr.encode_superposition(associations),
                    count,
                ),
            )
        self._deltas.clear()


def _plus(a: hrr.Superposition, b: hrr.Superposition) -> hrr.Superposition:
    if len(a) != len(b):
        raise ValueError(f"bundle dimension mismatch: {len(a)} vs {len(b)}")
    if isinstance(a, list) or isinstance(b, list):
        return [x + y for x, y in zip(a, b, strict=True)]
    return a + b


def read_bundle(
    conn: sqlite3.Connection, category: str
) -> tuple[hrr.Superposition, hrr.Superposition, int] | None:
    rows = conn.execute(
        "SELECT vector, associations, count FROM category_bundles WHERE category = ?",
        (category,),
    ).fetchall()
    if not rows:
        return None
    return (
        hrr.decode_superposition(rows[0][0]),
        hrr.decode_superposition(rows[0][1]),
        int(rows[0][2]),
    )
