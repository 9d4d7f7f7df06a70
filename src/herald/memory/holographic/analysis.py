"""Structured recall over entities: probe, related, reason.

- probe(category, entity): unbind the entity's atom from the category's
  association bundle; what is left resembles the facts of that category that
  mention the entity. The category's facts are ranked by similarity to it
  (normalised by the signal expected for a bundle of that size), with a boost
  for an explicit entity link. A bundle holds about `hrr.bundle_capacity(dim)`
  entity links readably (179 at 1024 phases); past that its answer is noise,
  so probe answers from the explicit links alone (by trust and recency).
- related(entity): the facts about the entity, then facts that share its
  co-occurring entities, then facts whose vectors resemble the entity's facts.
- reason(entities): facts connected to all or most (a strict majority) of the
  given entities (linked, or naming them in the text), ranked by coverage and
  by similarity to the bundle of those entities; when no fact reaches a
  majority, the best-connected facts answer.
Every score is multiplied by trust; facts below the trust floor are left out.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

import herald.memory.holographic.hrr as hrr
from herald.memory.holographic.encoding import encode_entities, entity_atom
from herald.memory.holographic.records import FactHit
from herald.memory.holographic.search import closest, recent_prefixes
from herald.memory.holographic.text import clean_text, normalize_category, normalize_entity

if TYPE_CHECKING:
    from herald.memory.holographic.reader import FactReader

SCAN_LIMIT = 5000
NEIGHBOUR_POOL = 500
NEIGHBOUR_CATEGORIES = 3
MAX_QUERY_ENTITIES = 12


def _entity_name(raw: object) -> str:
    if not isinstance(raw, str):
        raise ValueError(f"an entity is a string, got {raw!r}")
    name = normalize_entity(clean_text(raw))
    if not name:
        raise ValueError("the entity is empty: name a person, project, place or thing")
    return name


def _linked_ids(
    store: FactReader, entity: str, min_trust: float, *, category: str | None = None
) -> set[int]:
    """The newest SCAN_LIMIT facts linked to `entity` (in `category`, if given)."""
    where, params = "", []
    if category is not None:
        where, params = " AND f.category = ?", [category]
    rows = store.read(
        "SELECT fe.fact_id FROM fact_entities fe JOIN entities e ON e.id = fe.entity_id"
        f" JOIN facts f ON f.id = fe.fact_id WHERE e.name = ? AND f.trust >= ?{where}"
        " ORDER BY f.updated_at DESC LIMIT ?",
        [entity, min_trust, *params, SCAN_LIMIT],
    )
    return {int(row[0]) for row in rows}


def _mentioning_ids(store: FactReader, entity: str, min_trust: float) -> set[int]:
    """Facts whose text contains the entity as a phrase (catches facts where the
    extractor missed it, e.g. a lower-case name)."""
    words = entity.split()
    if not words:
        return set()
    phrase = '"' + " ".join(words).replace('"', '""') + '"'
    try:
        rows = store.read(
            "SELECT f.id FROM facts_fts JOIN facts f ON f.id = facts_fts.rowid"
            " WHERE facts_fts MATCH ? AND f.trust >= ? LIMIT ?",
            (f"content : {phrase}", min_trust, SCAN_LIMIT),
        )
    except sqlite3.OperationalError:  # an FTS syntax corner: the linked facts still answer
        return set()
    return {int(row[0]) for row in rows}


def _vectors(store: FactReader, ids: Sequence[int]) -> dict[int, bytes]:
    out: dict[int, bytes] = {}
    for start in range(0, len(ids), 500):
        chunk = list(ids[start : start + 500])
        for row in store.read(
            f"SELECT id, vector FROM facts WHERE id IN ({', '.join('?' for _ in chunk)})", chunk
        ):
            out[int(row[0])] = row[1]
    return out


def _hits(
    store: FactReader, scored: dict[int, tuple[float, dict[str, float]]], limit: int
) -> list[FactHit]:
    """Top `limit` by relevance × trust × decay, as FactHits (only the winners are
    loaded in full)."""
    now = store.clock()
    ranked: list[tuple[float, int, dict[str, float]]] = []
    ids = list(scored)
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        for row in store.read(
            "SELECT id, trust, updated_at, last_used_at FROM facts"
            f" WHERE id IN ({', '.join('?' for _ in chunk)})",
            chunk,
        ):
            fact_id, trust = int(row[0]), float(row[1])
            relevance, parts = scored[fact_id]
            decay = store.decay_at(row[2], row[3], now)
            parts = {**parts, "relevance": relevance, "trust": trust}
            if decay != 1.0:
                parts["decay"] = decay
            ranked.append((relevance * trust * decay, fact_id, parts))
    ranked.sort(key=lambda item: (-item[0], -item[1]))
    top = ranked[:limit]
    facts = store.load_facts([fact_id for _, fact_id, _ in top])
    return [
        FactHit(facts[fact_id], score, parts) for score, fact_id, parts in top if fact_id in facts
    ]


def probe(store: FactReader, category: str, entity: str, *, limit: int) -> list[FactHit]:
    """What `category` knows about `entity`."""
    if not isinstance(category, str) or not category.strip():
        raise ValueError("probe needs a category (e.g. 'people', 'preferences')")
    name = _entity_name(entity)
    category = normalize_category(clean_text(category))
    bundle = store.category_bundle(category)
    if bundle is None:
        return []
    _, associations, _ = bundle
    target = hrr.unbind(hrr.to_phases(associations), entity_atom(name, store.dimension))
    pairs = int(
        store.read(
            "SELECT COUNT(*) FROM fact_entities fe JOIN facts f ON f.id = fe.fact_id"
            " WHERE f.category = ?",
            (category,),
        )[0][0]
    )
    linked = _linked_ids(store, name, store.min_trust, category=category)
    # Past its capacity the bundle's answer drowns in noise: then only the
    # explicit links are candidates (still reported with their similarity).
    readable = pairs <= hrr.bundle_capacity(store.dimension)
    candidates = set(linked)
    if readable:
        prefixes = recent_prefixes(
            store, "category = ? AND trust >= ?", [category, store.min_trust], SCAN_LIMIT
        )
        candidates.update(closest(store, target, prefixes, SCAN_LIMIT))
    if not candidates:
        return []
    ids = sorted(candidates)
    blobs = _vectors(store, ids)
    sims = dict(zip(ids, hrr.similarities_to_blobs(target, [blobs[i] for i in ids]), strict=True))
    expected = hrr.expected_member_similarity(max(1, pairs))
    floor = hrr.noise_floor(store.dimension)
    scored: dict[int, tuple[float, dict[str, float]]] = {}
    for fact_id in ids:
        sim, is_linked = sims[fact_id], fact_id in linked
        if sim < floor and not is_linked:
            continue
        holographic = min(1.0, max(0.0, sim / expected)) if readable else 0.0
        relevance = 0.6 * holographic + 0.4 * float(is_linked) if readable else 1.0
        scored[fact_id] = (relevance, {"holographic": sim, "linked": float(is_linked)})
    return _hits(store, scored, limit)


def _co_entities(store: FactReader, ids: Sequence[int], exclude: str) -> Counter[str]:
    counts: Counter[str] = Counter()
    for start in range(0, len(ids), 500):
        chunk = list(ids[start : start + 500])
        for name, count in store.read(
            "SELECT e.name, COUNT(*) FROM fact_entities fe JOIN entities e ON e.id = fe.entity_id"
            f" WHERE fe.fact_id IN ({', '.join('?' for _ in chunk)}) GROUP BY e.name",
            chunk,
        ):
            if name != exclude:
                counts[name] += int(count)
    return counts


def related(store: FactReader, entity: str, *, limit: int) -> list[FactHit]:
    """Facts about `entity` and facts connected to it through shared entities or
    similar vectors."""
    name = _entity_name(entity)
    direct = _linked_ids(store, name, store.min_trust) | _mentioning_ids(
        store, name, store.min_trust
    )
    if not direct:
        return []
    co_entities = _co_entities(store, sorted(direct), name)
    second: Counter[int] = Counter()
    total_weight = sum(co_entities.values()) or 1
    for co_name, weight in co_entities.most_common(MAX_QUERY_ENTITIES):
        for fact_id in _linked_ids(store, co_name, store.min_trust) - direct:
            second[fact_id] += weight
    # Vector neighbours: recent facts in the categories that hold most of the
    # entity's facts and resemble the bundle of its (most recent) facts.
    direct_blobs = _vectors(store, sorted(direct)[-NEIGHBOUR_POOL:])
    centroid = hrr.bundle([hrr.decode_phases(blob) for blob in direct_blobs.values()])
    marks = ", ".join("?" for _ in direct_blobs)
    categories = [
        row[0]
        for row in store.read(
            f"SELECT category FROM facts WHERE id IN ({marks})"
            " GROUP BY category ORDER BY COUNT(*) DESC LIMIT ?",
            [*direct_blobs, NEIGHBOUR_CATEGORIES],
        )
    ]
    prefixes: dict[int, bytes] = {}
    for category in categories:
        prefixes.update(
            recent_prefixes(
                store, "category = ? AND trust >= ?", [category, store.min_trust], NEIGHBOUR_POOL
            )
        )
    neighbours = closest(store, centroid, prefixes, NEIGHBOUR_POOL)
    strongest_second = [fact_id for fact_id, _ in second.most_common(NEIGHBOUR_POOL)]
    ids = sorted(set(direct_blobs) | set(neighbours) | set(strongest_second))
    blobs = {**direct_blobs, **_vectors(store, [i for i in ids if i not in direct_blobs])}
    sims = dict(zip(ids, hrr.similarities_to_blobs(centroid, [blobs[i] for i in ids]), strict=True))
    floor = hrr.noise_floor(store.dimension)
    scored: dict[int, tuple[float, dict[str, float]]] = {}
    for fact_id in ids:
        sim = max(0.0, sims[fact_id])
        shared = min(1.0, second.get(fact_id, 0) / total_weight)
        if fact_id in direct:
            relevance = 0.7 + 0.3 * sim
        elif shared > 0 or sims[fact_id] >= floor:
            relevance = 0.4 * shared + 0.3 * sim
        else:
            continue
        parts = {"direct": float(fact_id in direct), "shared": shared, "vector": sim}
        scored[fact_id] = (relevance, parts)
    return _hits(store, scored, limit)


def reason(store: FactReader, entities: Sequence[str], *, limit: int) -> list[FactHit]:
    """Facts that connect all or most of `entities`."""
    if isinstance(entities, str):
        entities = [entities]
    if not isinstance(entities, list | tuple) or not entities:
        raise ValueError("reason needs entities: a list of two or more names to connect")
    names = list(dict.fromkeys(_entity_name(e) for e in entities))[:MAX_QUERY_ENTITIES]
    matched: dict[int, set[str]] = {}
    for name in names:
        for fact_id in _linked_ids(store, name, store.min_trust) | _mentioning_ids(
            store, name, store.min_trust
        ):
            matched.setdefault(fact_id, set()).add(name)
    if not matched:
        return []
    # "Most" is a strict majority; when no fact reaches it, the best-connected ones answer.
    needed = min(len(names) // 2 + 1, max(len(found) for found in matched.values()))
    ids = [fact_id for fact_id, found in matched.items() if len(found) >= needed]
    query = encode_entities(names, store.dimension)
    blobs = _vectors(store, ids)
    sims = dict(zip(ids, hrr.similarities_to_blobs(query, [blobs[i] for i in ids]), strict=True))
    scored: dict[int, tuple[float, dict[str, float]]] = {}
    for fact_id in ids:
        coverage = len(matched[fact_id]) / len(names)
        sim = max(0.0, sims[fact_id])
        scored[fact_id] = (
            0.75 * coverage + 0.25 * sim,
            {"coverage": coverage, "vector": sim},
        )
    return _hits(store, scored, limit)
