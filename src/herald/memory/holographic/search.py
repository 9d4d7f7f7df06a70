"""Fact search: gather candidates, then re-rank them.

Candidates come from the FTS5 index (every query word quoted as a literal, OR
semantics, BM25 order), from a substring scan for words in scripts written
without spaces (which the unicode61 tokenizer cannot split), with the `memory`
extra's model from the facts whose sentence vectors are nearest the query's
(meanings.py), and, when those find fewer than asked for, from a vector scan over
the facts of the categories whose bundles resemble the query plus the most
recently changed facts.

Each candidate's relevance is
    w_fts·(BM25 relative to the best candidate) + w_overlap·(word overlap)
    + w_vec·(HRR similarity to the query vector) + w_meaning·(sentence similarity),
and its score is relevance × trust × time decay. Facts below the trust floor
are never candidates. Without the model the meaning part is left out
(DEFAULT_WEIGHTS; WITH_MEANING when it is there); without numpy the HRR part is
skipped too and the other weights are re-normalised.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import herald.memory.holographic.hrr as hrr
import herald.memory.holographic.meanings as meanings
from herald.memory.holographic.encoding import encode_query
from herald.memory.holographic.records import FactHit
from herald.memory.holographic.text import (
    STOPWORDS,
    clean_text,
    content_words,
    extract_entities,
    has_unsegmented,
    normalize_category,
    stem,
)

if TYPE_CHECKING:
    from herald.memory.holographic.reader import FactReader

MAX_QUERY_CHARS = 4000
MAX_FTS_TERMS = 16
FTS_CANDIDATES = 120
BM25_WEIGHTS = "1.0, 0.3"  # content, category
MAX_SUBSTRING_TERMS = 8
VECTOR_SCAN_CATEGORIES = 2
VECTOR_SCAN_FACTS = 1000
SCAN_DIMENSION = 256

_QUERY_WORD_RE = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
_FACT_COLUMNS = (
    "f.id, f.content, f.category, f.trust, f.created_at, f.updated_at, f.last_used_at,"
    " f.helpful_count, f.unhelpful_count, f.vector"
)


@dataclass(frozen=True)
class RankWeights:
    fts: float = 0.45
    overlap: float = 0.35
    vector: float = 0.20
    meaning: float = 0.0

    def without_vectors(self) -> RankWeights:
        total = self.fts + self.overlap + self.meaning
        return RankWeights(
            fts=self.fts / total,
            overlap=self.overlap / total,
            vector=0.0,
            meaning=self.meaning / total,
        )


DEFAULT_WEIGHTS = RankWeights()
# With the facts' sentence vectors (meanings.py), meaning takes most of the HRR
# vector's share and some of the words'. On LoCoMo the recall prefetch alone: hit@5
# 0.567 -> 0.590 (meaning 0.25: 0.586, 0.50: 0.590 with hit@10 no better).
WITH_MEANING = RankWeights(fts=0.30, overlap=0.25, vector=0.05, meaning=0.40)


def fts_terms(query: str) -> list[str]:
    """Distinct query words worth matching (stopwords only if nothing else is left)."""
    words: list[str] = []
    for match in _QUERY_WORD_RE.finditer(query.casefold()):
        word = match.group()
        if word not in words:
            words.append(word)
    meaningful = [w for w in words if w not in STOPWORDS]
    return (meaningful or words)[:MAX_FTS_TERMS]


def fts_expression(terms: list[str]) -> str:
    """Any of `terms`, each a quoted FTS5 string: user text is never query syntax."""
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)


def word_overlap(query_words: set[str], fact_words: set[str]) -> float:
    """Mostly recall of the query's words, a little precision (shorter, exacter
    facts win ties)."""
    if not query_words or not fact_words:
        return 0.0
    shared = len(query_words & fact_words)
    return 0.8 * shared / len(query_words) + 0.2 * shared / len(fact_words)


def _stems(words: list[str]) -> set[str]:
    return {stem(word) for word in words}


def _fts_candidates(
    store: FactReader, terms: list[str], category: str | None, min_trust: float
) -> dict[int, float]:
    """Fact id -> BM25 strength (positive, larger is better) of the best matches.

    Without a category the index is ranked alone (the join is slower) and trust
    is checked when the rows are loaded."""
    if not terms:
        return {}
    if category is None:
        sql = (
            f"SELECT rowid AS id, bm25(facts_fts, {BM25_WEIGHTS}) AS rank FROM facts_fts"
            " WHERE facts_fts MATCH ? ORDER BY rank LIMIT ?"
        )
        params: list[object] = [fts_expression(terms), FTS_CANDIDATES]
    else:
        sql = (
            f"SELECT f.id AS id, bm25(facts_fts, {BM25_WEIGHTS}) AS rank FROM facts_fts"
            " JOIN facts f ON f.id = facts_fts.rowid WHERE facts_fts MATCH ?"
            " AND f.trust >= ? AND f.category = ? ORDER BY rank LIMIT ?"
        )
        params = [fts_expression(terms), min_trust, category, FTS_CANDIDATES]
    try:
        rows = store.read(sql, params)
    except sqlite3.OperationalError:  # quoting makes this unreachable; never fail a search
        return {}
    return {int(row["id"]): max(0.0, -float(row["rank"])) for row in rows}


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _substring_candidates(store: FactReader, terms: list[str]) -> list[int]:
    """Facts containing unsegmented-script terms as substrings, most terms first.

    Selects from `content` and the id alone so that SQLite scans the narrow
    unique index on content instead of the table (whose rows carry vectors);
    trust and category are checked when the rows are loaded."""
    pieces = [term for term in terms if has_unsegmented(term)][:MAX_SUBSTRING_TERMS]
    if not pieces:
        return []
    matched = " + ".join("(instr(content, ?) > 0)" for _ in pieces)
    likes = " OR ".join("content LIKE ? ESCAPE '\\'" for _ in pieces)
    rows = store.read(
        f"SELECT id, {matched} AS matched FROM facts WHERE {likes}"
        " ORDER BY matched DESC, id DESC LIMIT ?",
        [*pieces, *(f"%{_escape_like(p)}%" for p in pieces), FTS_CANDIDATES],
    )
    return [int(row[0]) for row in rows]


def recent_prefixes(
    store: FactReader, where: str, params: Sequence[object], limit: int
) -> dict[int, bytes]:
    """The first SCAN_DIMENSION phases of the newest `limit` facts matching `where`.

    Atoms are prefix-stable and every operation is element-wise, so a vector's
    prefix *is* the fact encoded at the smaller dimension: a noisier but four
    times cheaper first pass over many facts."""
    dim = min(store.dimension, SCAN_DIMENSION)
    rows = store.read(
        f"SELECT id, substr(vector, 1, ?) FROM facts WHERE {where}"
        " ORDER BY updated_at DESC LIMIT ?",
        [2 * dim, *params, limit],
    )
    return {int(row[0]): row[1] for row in rows}


def closest(
    store: FactReader, query: hrr.Vector, prefixes: dict[int, bytes], want: int
) -> list[int]:
    """Ids of up to `want` facts whose prefix resembles the query's prefix beyond
    chance (2σ at the prefix dimension), best first."""
    if not prefixes:
        return []
    dim = min(store.dimension, SCAN_DIMENSION)
    ids = list(prefixes)
    sims = hrr.similarities_to_blobs(query[:dim], [prefixes[i] for i in ids])
    floor = hrr.noise_floor(dim, 2.0)
    ranked = sorted(
        ((sim, fact_id) for sim, fact_id in zip(sims, ids, strict=True) if sim >= floor),
        reverse=True,
    )
    return [fact_id for _, fact_id in ranked[:want]]


def _vector_candidates(
    store: FactReader, query_vector: hrr.Vector, category: str | None, min_trust: float, want: int
) -> list[int]:
    """Facts whose vectors resemble the query, from the best-matching categories'
    facts and the most recently changed facts (scored on the full vector by the
    caller)."""
    if category is not None:
        categories = [category]
    else:
        rows = store.read("SELECT category, vector FROM category_bundles")
        scored = [
            (hrr.similarity(query_vector, hrr.to_phases(hrr.decode_superposition(row[1]))), row[0])
            for row in rows
        ]
        floor = hrr.noise_floor(store.dimension, 2.0)
        categories = [name for sim, name in sorted(scored, reverse=True) if sim > floor]
        categories = categories[:VECTOR_SCAN_CATEGORIES]
    pool: dict[int, bytes] = {}
    for name in categories:
        pool.update(
            recent_prefixes(
                store, "category = ? AND trust >= ?", [name, min_trust], VECTOR_SCAN_FACTS
            )
        )
    if category is None:
        pool.update(recent_prefixes(store, "trust >= ?", [min_trust], VECTOR_SCAN_FACTS))
    return closest(store, query_vector, pool, want)


def _load_rows(
    store: FactReader, ids: list[int], min_trust: float, category: str | None
) -> list[sqlite3.Row]:
    where, params = "", []
    if category is not None:
        where, params = " AND f.category = ?", [category]
    rows: list[sqlite3.Row] = []
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        rows += store.read(
            f"SELECT {_FACT_COLUMNS} FROM facts f WHERE f.id IN"
            f" ({', '.join('?' for _ in chunk)}) AND f.trust >= ?{where}",
            [*chunk, min_trust, *params],
        )
    return rows


def search_facts(
    store: FactReader,
    query: str,
    *,
    limit: int,
    category: str | None = None,
    min_trust: float = 0.2,
    weights: RankWeights | None = None,
) -> list[FactHit]:
    """The best `limit` facts for `query`, best first. Never raises for any query text."""
    if not isinstance(query, str) or isinstance(limit, bool) or limit <= 0:
        return []
    query = clean_text(query)[:MAX_QUERY_CHARS]
    if category is not None:
        category = normalize_category(category)
    meaning = None
    if weights is None or weights.meaning > 0:
        meaning = meanings.scores(store, query)
    if weights is None:
        weights = DEFAULT_WEIGHTS if meaning is None else WITH_MEANING
    use_vectors = hrr.numpy_available()
    if not use_vectors:
        weights = weights.without_vectors()
    terms = fts_terms(query)
    q_words = content_words(query) or terms
    q_entities = extract_entities(query)
    q_stems = _stems(q_words)

    ranks = _fts_candidates(store, terms, category, min_trust)
    substring_ids: list[int] = []
    if len(ranks) < limit:
        substring_ids = [i for i in _substring_candidates(store, terms) if i not in ranks]
    query_vector = encode_query(q_words, q_entities, store.dimension) if use_vectors else None
    vector_ids: list[int] = []
    if query_vector is not None and len(ranks) + len(substring_ids) < limit:
        vector_ids = _vector_candidates(store, query_vector, category, min_trust, 3 * limit)
    meaning_ids = meaning.best(3 * limit) if meaning is not None else []
    ids = list(dict.fromkeys([*ranks, *substring_ids, *vector_ids, *meaning_ids]))
    if not ids:
        return []
    rows = _load_rows(store, ids, min_trust, category)
    sims = (
        hrr.similarities_to_blobs(query_vector, [row["vector"] for row in rows])
        if query_vector is not None
        else [0.0] * len(rows)
    )
    best_rank = max(ranks.values(), default=0.0)
    unsegmented = [term for term in terms if has_unsegmented(term)]
    now = store.clock()
    vector_floor = hrr.noise_floor(store.dimension)
    scored: list[tuple[float, int, sqlite3.Row, dict[str, float]]] = []
    for row, sim in zip(rows, sims, strict=True):
        fact_id = int(row["id"])
        content = row["content"]
        if fact_id in ranks and best_rank > 0:
            fts_part = ranks[fact_id] / best_rank
        elif unsegmented:
            folded = content.casefold()
            fts_part = sum(term in folded for term in unsegmented) / len(unsegmented)
        else:
            fts_part = 0.0
        fact_words = _stems(content_words(content)) | _stems(content_words(row["category"]))
        overlap = word_overlap(q_stems, fact_words)
        vector_part = max(0.0, sim)
        meaning_part = max(0.0, meaning.get(fact_id)) if meaning is not None else 0.0
        if (
            fts_part == 0.0
            and overlap == 0.0
            and sim < vector_floor
            and meaning_part < meanings.MIN_SIMILARITY
        ):
            continue  # a vector-scan candidate that the full vector does not confirm
        relevance = (
            weights.fts * fts_part
            + weights.overlap * overlap
            + weights.vector * vector_part
            + weights.meaning * meaning_part
        )
        if relevance <= 0.0:
            continue
        decay = store.decay_at(row["updated_at"], row["last_used_at"], now)
        trust = float(row["trust"])
        parts = {
            "fts": fts_part,
            "overlap": overlap,
            "vector": vector_part,
            "meaning": meaning_part,
            "relevance": relevance,
            "trust": trust,
            "decay": decay,
        }
        scored.append((relevance * trust * decay, fact_id, row, parts))
    scored.sort(key=lambda item: (-item[0], -item[1]))
    top = scored[:limit]
    facts = store.load_facts([fact_id for _, fact_id, _, _ in top])
    return [
        FactHit(facts[fact_id], score, parts)
        for score, fact_id, _, parts in top
        if fact_id in facts
    ]
