"""Hybrid ranking of stored messages for `session_search`: words, meaning, time, names.

Candidates come from two sources:

- full text (FTS5 BM25): every term first, then any content word (with prefixes),
  so "What did Caroline research?" still finds a message with "caroline" and
  "researching" in it;
- vectors (`herald.memory.semantic`), when the embedding model is installed: the
  messages nearest in meaning, which share no word with the query at times. People's
  names are left out of the text embedded (`meaning_query`): on LoCoMo, keeping them
  made vectors pull in every message that merely addresses that person, and the
  fusion scored below full text alone.

Each source's list is turned into reciprocal-rank scores (1 / (K + rank)) and
summed, so a message both find rises above one only a single source likes. Then
the query's own hints lift what they point at: a time span it names ("last
summer", "in May") lifts messages from that span, and a name it mentions lifts
messages that contain it or were said by that identity.

Ties are broken the same way every time: more sources first, then the better best
single-source rank, then the newer message.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import herald.memory.query_parse as query_parse
import herald.memory.semantic as semantic
from herald.memory.holographic.text import stem

RRF_K = 60.0
FTS_WEIGHT = 1.0
VECTOR_WEIGHT = 1.0
TIME_BOOST = 0.5  # fraction added for a message inside the span the query names
NAME_BOOST = 0.15  # fraction added per name the message holds or was said by
FETCH = 50  # candidates per source
SNIPPET_CHARS = 300


@dataclass
class RankedHit:
    """A message found, with what found it. `rank` sorts ascending (best first), like
    the store's full-text hits, so callers can treat both alike."""

    message_id: int
    session_id: str
    role: str
    snippet: str
    created_at: float
    active: bool
    score: float = 0.0
    ranks: dict[str, int] = field(default_factory=dict)  # source -> 0-based rank there
    strict: bool = False  # matched every word of the query

    @property
    def rank(self) -> float:
        return -self.score

    def sort_key(self) -> tuple[float, int, int, int]:
        best = min(self.ranks.values()) if self.ranks else 1 << 30
        return (-self.score, -len(self.ranks), best, -self.message_id)


def order(hits: list[RankedHit]) -> list[RankedHit]:
    """Best first: score, then more sources, then best single rank, then newest."""
    return sorted(hits, key=RankedHit.sort_key)


def _reciprocal(rank: int, weight: float) -> float:
    return weight / (RRF_K + rank + 1)


def _contains_word(text: str, word: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(word)}", text, re.IGNORECASE) is not None


def meaning_query(query: str) -> str:
    """The query as the embedding model sees it: without people's names (title-case
    names; acronyms stay). Names pull a sentence model towards any message that
    addresses that person ("Wow, Caroline!"), whatever it is about; the name boost and
    the full-text source weigh names instead."""
    people = {name for name in query_parse.names(query) if name.istitle()}
    if not people:
        return query
    kept = [
        word for word in query.split() if word.strip("?!.,:;'\"").removesuffix("'s") not in people
    ]
    return " ".join(kept) or query


def relaxed_terms(query: str) -> list[str]:
    """The words the any-word search looks for: content words, cut to their stems
    ("visited" -> "visit", which matches "visiting" as a prefix), and without
    people's names when other words are left (the name boost weighs those)."""
    terms = query_parse.content_terms(query)
    people = {name.lower() for name in query_parse.names(query) if name.istitle()}
    terms = [term for term in terms if term not in people] or terms
    return list(dict.fromkeys(stem(term) for term in terms))


def boost(hit: RankedHit, row: Any, span: query_parse.TimeSpan | None, names: list[str]) -> None:
    """Raise `hit.score` for the query's time span and names (see the module docstring)."""
    factor = 1.0
    if span is not None and span.contains(float(row["created_at"])):
        factor += TIME_BOOST
    content = row["content"] or ""
    identity = str(row["identity"] or "").lower()
    for name in names:
        if name.lower() == identity or _contains_word(content, name):
            factor += NAME_BOOST
    hit.score *= factor


def rank_messages(
    store: Any,
    query: str,
    *,
    limit: int,
    identity: str | None = None,
    session_id: str | None = None,
    exclude_session_id: str | None = None,
    use_vectors: bool = True,
    clock: Callable[[], float] = time.time,
) -> list[RankedHit]:
    """Up to `limit` messages for `query`, best first. Never raises for any query text."""
    hits: dict[int, RankedHit] = {}

    def add(source: str, position: int, row: Any, snippet: str, strict: bool = False) -> None:
        hit = hits.get(row.message_id)
        if hit is None:
            hit = RankedHit(
                message_id=row.message_id,
                session_id=row.session_id,
                role=row.role,
                snippet=snippet,
                created_at=row.created_at,
                active=bool(row.active),
            )
            hits[hit.message_id] = hit
        hit.strict = hit.strict or strict
        if source not in hit.ranks:
            hit.ranks[source] = position
            hit.score += _reciprocal(position, FTS_WEIGHT if source == "fts" else VECTOR_WEIGHT)

    strict = store.search_messages(
        query,
        limit=FETCH,
        session_id=session_id,
        exclude_session_id=exclude_session_id,
        identity=identity,
    )
    words = list(strict)
    if len(words) < FETCH and session_id is None:
        terms = relaxed_terms(query)
        words += store.search_messages_relaxed(
            " ".join(terms) if terms else query,
            limit=FETCH - len(words),
            exclude_session_id=exclude_session_id,
            exclude_ids=[hit.message_id for hit in strict],
            identity=identity,
        )
    strict_ids = {hit.message_id for hit in strict}
    position, previous = 0, None
    for index, found in enumerate(words):
        stage = (found.message_id in strict_ids, found.rank)
        if stage != previous:  # equal bm25 in one stage: equal rank (the tie-break decides)
            position, previous = index, stage
        add("fts", position, found, found.snippet, found.message_id in strict_ids)

    if use_vectors and semantic.available():
        semantic.index_for_search(store)
        vector = semantic.embed_query(meaning_query(query))
        near = []
        if vector is not None:
            near = semantic.nearest(
                store, vector, limit=FETCH, identity=identity, session_id=session_id,
                exclude_session_id=exclude_session_id,
            )  # fmt: skip
        rows = {row["id"]: row for row in store.candidate_rows([n.message_id for n in near])}
        for position, found in enumerate(near):
            row = rows.get(found.message_id)
            if row is None or (identity is not None and row["identity"] != identity):
                continue  # checked again on the row itself (invariant 19)
            hit = hits.get(found.message_id)
            if hit is None:
                hit = RankedHit(
                    message_id=row["id"],
                    session_id=row["session_id"],
                    role=row["role"],
                    snippet=(row["content"] or "")[:SNIPPET_CHARS],
                    created_at=float(row["created_at"]),
                    active=bool(row["active"]),
                )
                hits[hit.message_id] = hit
            hit.ranks["vector"] = position
            hit.score += _reciprocal(position, VECTOR_WEIGHT)

    if not hits:
        return []
    span = query_parse.time_span(query, clock())
    names = query_parse.names(query)
    if span is not None or names:
        rows = {row["id"]: row for row in store.candidate_rows(list(hits))}
        for hit in hits.values():
            if hit.message_id in rows:
                boost(hit, rows[hit.message_id], span, names)
    return order(list(hits.values()))[:limit]
