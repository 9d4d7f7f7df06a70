"""Likely contradictions: pairs of facts about the same thing that disagree.

A heuristic that proposes pairs for the model to judge, not a verdict. Two
facts are compared when they share an entity (or, with `fact_id`, when the
full-text index finds the other from its words; facts without entities are
compared within their category). Their words are stemmed, with stopwords,
negations and numbers set aside. A pair is reported when the words overlap
(Jaccard) and one of these holds:

- negation: one states it negated ("not", "never", "no longer", "doesn't",
  …) and the other does not, with overlap >= 0.5;
- number: both carry numbers, the numbers differ, overlap >= 0.5;
- value: they share at least two words and each has only one or two words of
  its own ("Alice lives in Paris" / "Alice lives in Berlin"), overlap >= 0.34.

Score = overlap × 1.0 (negation), 0.9 (number) or 0.7 (value). "Value" pairs
are often compatible ("likes tea" / "likes coffee"): that is why the model is
asked to decide.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from itertools import combinations
from typing import TYPE_CHECKING

from herald.memory.holographic.records import Contradiction, Fact
from herald.memory.holographic.search import fts_expression, fts_terms
from herald.memory.holographic.text import (
    NEGATIONS,
    STOPWORDS,
    clean_text,
    has_negation,
    normalize_entity,
    numbers,
    stem,
    tokens,
)

if TYPE_CHECKING:
    from herald.memory.holographic.reader import FactReader

GROUP_LIMIT = 60  # most recent facts compared per entity (pairs grow quadratically)
MAX_PAIRS = 50_000
NEIGHBOURS = 80
_REASON_WEIGHTS = {"negation": 1.0, "number": 0.9, "value": 0.7}
# Verbs that carry the claim ("likes", "uses") matter here even though search drops them.
_IGNORED = (STOPWORDS - {"like", "likes", "want", "wants", "use", "uses", "used"}) | NEGATIONS


@dataclass(frozen=True)
class _Profile:
    words: frozenset[str]
    numbers: frozenset[str]
    negated: bool


def _profile(content: str) -> _Profile:
    nums = numbers(content)
    words = {
        stem(token)
        for token in tokens(content)
        if token not in _IGNORED and token not in nums and not token.isdigit()
    }
    return _Profile(frozenset(words), frozenset(nums), has_negation(content))


def compare(first: str, second: str) -> tuple[str, float] | None:
    """(reason, score) when the two statements likely conflict, else None."""
    return _compare(_profile(first), _profile(second))


def _compare(a: _Profile, b: _Profile) -> tuple[str, float] | None:
    if not a.words or not b.words:
        return None
    shared = a.words & b.words
    overlap = len(shared) / len(a.words | b.words)
    reason: str | None = None
    if a.negated != b.negated and overlap >= 0.5:
        reason = "negation"
    elif a.numbers and b.numbers and a.numbers != b.numbers and overlap >= 0.5:
        reason = "number"
    elif (
        len(shared) >= 2
        and overlap >= 0.34
        and 1 <= len(a.words - b.words) <= 2
        and 1 <= len(b.words - a.words) <= 2
    ):
        reason = "value"
    if reason is None:
        return None
    return reason, overlap * _REASON_WEIGHTS[reason]


def _group_ids(store: FactReader, min_trust: float) -> Iterable[list[int]]:
    """Facts sharing an entity, then entity-less facts per category."""
    entity_rows = store.read(
        "SELECT fe.entity_id FROM fact_entities fe JOIN facts f ON f.id = fe.fact_id"
        " WHERE f.trust >= ? GROUP BY fe.entity_id HAVING COUNT(*) >= 2",
        (min_trust,),
    )
    for row in entity_rows:
        ids = store.read(
            "SELECT f.id FROM fact_entities fe JOIN facts f ON f.id = fe.fact_id"
            " WHERE fe.entity_id = ? AND f.trust >= ? ORDER BY f.updated_at DESC LIMIT ?",
            (row[0], min_trust, GROUP_LIMIT),
        )
        yield [int(r[0]) for r in ids]
    for row in store.read("SELECT category FROM category_bundles"):
        ids = store.read(
            "SELECT id FROM facts f WHERE category = ? AND trust >= ? AND NOT EXISTS"
            " (SELECT 1 FROM fact_entities fe WHERE fe.fact_id = f.id)"
            " ORDER BY updated_at DESC LIMIT ?",
            (row[0], min_trust, GROUP_LIMIT),
        )
        yield [int(r[0]) for r in ids]


def _neighbours(store: FactReader, fact: Fact, min_trust: float) -> list[int]:
    ids: dict[int, None] = {}
    for row in store.read(
        "SELECT DISTINCT other.fact_id FROM fact_entities mine JOIN fact_entities other"
        " ON other.entity_id = mine.entity_id JOIN facts f ON f.id = other.fact_id"
        " WHERE mine.fact_id = ? AND other.fact_id != ? AND f.trust >= ? LIMIT ?",
        (fact.id, fact.id, min_trust, NEIGHBOURS),
    ):
        ids[int(row[0])] = None
    terms = fts_terms(fact.content)
    if terms:
        for row in store.read(
            "SELECT f.id FROM facts_fts JOIN facts f ON f.id = facts_fts.rowid"
            " WHERE facts_fts MATCH ? AND f.id != ? AND f.trust >= ?"
            " ORDER BY facts_fts.rank LIMIT ?",
            (fts_expression(terms), fact.id, min_trust, NEIGHBOURS),
        ):
            ids[int(row[0])] = None
    return list(ids)


def find_contradictions(
    store: FactReader, *, limit: int, entity: str | None = None, fact_id: int | None = None
) -> list[Contradiction]:
    """Likely conflicting pairs, strongest first (all facts, one entity's, or one fact's)."""
    min_trust = store.min_trust
    pairs: set[tuple[int, int]] = set()
    if fact_id is not None:
        fact = store.get(fact_id)
        if fact is None:
            raise ValueError(f"no fact #{fact_id}: search first to find the right id")
        pairs = {(min(fact_id, o), max(fact_id, o)) for o in _neighbours(store, fact, min_trust)}
    elif entity is not None:
        name = normalize_entity(clean_text(entity)) if isinstance(entity, str) else ""
        if not name:
            raise ValueError("contradict's entity must be a non-empty name")
        rows = store.read(
            "SELECT f.id FROM fact_entities fe JOIN entities e ON e.id = fe.entity_id"
            " JOIN facts f ON f.id = fe.fact_id WHERE e.name = ? AND f.trust >= ?"
            " ORDER BY f.updated_at DESC LIMIT ?",
            (name, min_trust, GROUP_LIMIT * 4),
        )
        pairs = set(combinations(sorted(int(r[0]) for r in rows), 2))
    else:
        for group in _group_ids(store, min_trust):
            pairs.update(combinations(sorted(group), 2))
            if len(pairs) >= MAX_PAIRS:
                break
    if not pairs:
        return []
    facts = store.load_facts(sorted({i for pair in pairs for i in pair}))
    profiles = {fact_id: _profile(fact.content) for fact_id, fact in facts.items()}
    found: list[Contradiction] = []
    for first_id, second_id in pairs:
        first, second = facts.get(first_id), facts.get(second_id)
        if first is None or second is None:
            continue
        verdict = _compare(profiles[first_id], profiles[second_id])
        if verdict is not None:
            found.append(Contradiction(first, second, verdict[1], verdict[0]))
    found.sort(key=lambda c: (-c.score, -max(c.first.id, c.second.id)))
    return found[:limit]
