"""`FactStore`: facts the agent chose to remember, in one SQLite file.

Unlike the transcript, facts are edited and removed; the FTS index follows
through triggers and the per-category bundles through `BundleDeltas`, in the
same transaction as the row change. One connection (WAL, foreign keys),
serialised by a lock: the store is small and written a fact at a time.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any

import herald.memory.holographic.analysis as analysis
import herald.memory.holographic.hrr as hrr
import herald.memory.holographic.meanings as meanings
from herald.memory.holographic.bundles import BundleDeltas, read_bundle
from herald.memory.holographic.contradictions import find_contradictions
from herald.memory.holographic.encoding import encode_fact
from herald.memory.holographic.inputs import check_content, check_id, explicit_entities
from herald.memory.holographic.records import AddResult, Contradiction, Fact, FactHit, NewFact
from herald.memory.holographic.schema import FactStoreError, migrate
from herald.memory.holographic.search import search_facts
from herald.memory.holographic.text import (
    content_words,
    extract_entities,
    normalize_category,
    normalize_content,
)

log = logging.getLogger(__name__)

DEFAULT_DIMENSION = 1024
DEFAULT_TRUST = 0.5
DUPLICATE_TRUST_BUMP = 0.05
HELPFUL_STEP = 0.1
UNHELPFUL_STEP = 0.15  # bad facts should sink faster than good ones rise
BUSY_TIMEOUT_S = 10.0
PAGE_SIZE = 8192

_FACT_COLUMNS = (
    "id, content, category, trust, created_at, updated_at, last_used_at,"
    " helpful_count, unhelpful_count"
)


class FactStore:
    """Facts with trust scores, entity links, an FTS5 index and HRR vectors."""

    def __init__(
        self,
        path: Path | str,
        *,
        dimension: int = DEFAULT_DIMENSION,
        min_trust: float = 0.2,
        decay_half_life_days: float | None = None,
        max_results: int = 8,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if isinstance(dimension, bool) or not isinstance(dimension, int) or dimension < 16:
            raise ValueError(f"dimension must be an int >= 16, got {dimension!r}")
        if decay_half_life_days is not None and decay_half_life_days <= 0:
            raise ValueError("decay_half_life_days must be positive (or None for no decay)")
        self.path = Path(path)
        self.min_trust = float(min_trust)
        self.decay_half_life_days = decay_half_life_days
        self.max_results = int(max_results)
        self.clock = clock
        self._lock = threading.RLock()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            conn = sqlite3.connect(
                str(self.path),
                timeout=BUSY_TIMEOUT_S,
                isolation_level=None,
                check_same_thread=False,
            )
        except sqlite3.Error as exc:
            raise FactStoreError(f"cannot open fact store {self.path}: {exc}") from exc
        conn.row_factory = sqlite3.Row
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute("PRAGMA synchronous = FULL")
            # A fact row carries a 2 KiB vector at 1024 phases: with 4 KiB pages
            # only one row fits per page; 8 KiB pages hold three (the file is
            # about a third smaller). Takes effect only when the file is new.
            conn.execute(f"PRAGMA page_size = {PAGE_SIZE}")
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchall()[0][0]
            if str(mode).lower() != "wal":
                raise FactStoreError(f"{self.path}: SQLite refused WAL mode (got {mode!r})")
            migrate(conn, self.path)
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise FactStoreError(f"{self.path} is not a usable fact store: {exc}") from exc
        except BaseException:
            conn.close()
            raise
        self._conn: sqlite3.Connection | None = conn
        self.dimension = dimension
        stored = self._meta("dimension")
        if stored is None:
            with self._transaction() as tx:
                tx.execute(
                    "INSERT INTO meta (key, value) VALUES ('dimension', ?)", (str(dimension),)
                )
        elif int(stored) != dimension:
            log.info(
                "fact store %s: re-encoding from %s to %d phases", self.path, stored, dimension
            )
            self.rebuild(dimension)

    # -- lifecycle ---------------------------------------------------------

    def close(self) -> None:
        with self._lock:
            conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()

    def __enter__(self) -> FactStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"FactStore({str(self.path)!r}, dimension={self.dimension})"

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            conn = self._connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise FactStoreError("the fact store is closed")
        return self._conn

    def read(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        """Run one read-only statement (for the search and analysis modules)."""
        with self._lock:
            return self._connection().execute(sql, params).fetchall()

    def _meta(self, key: str) -> str | None:
        rows = self.read("SELECT value FROM meta WHERE key = ?", (key,))
        return rows[0][0] if rows else None

    # -- reading -----------------------------------------------------------

    def count(self) -> int:
        return int(self.read("SELECT COUNT(*) FROM facts")[0][0])

    def categories(self) -> dict[str, int]:
        rows = self.read("SELECT category, count FROM category_bundles ORDER BY category")
        return {row[0]: int(row[1]) for row in rows}

    def get(self, fact_id: int) -> Fact | None:
        return self.load_facts([check_id(fact_id)]).get(fact_id)

    def load_facts(self, ids: Sequence[int]) -> dict[int, Fact]:
        """The facts with these ids (missing ids are left out), entities included."""
        if not ids:
            return {}
        with self._lock:
            conn = self._connection()
            rows: list[sqlite3.Row] = []
            entities: dict[int, list[str]] = {}
            for start in range(0, len(ids), 500):
                chunk = list(ids[start : start + 500])
                marks = ", ".join("?" for _ in chunk)
                rows += conn.execute(
                    f"SELECT {_FACT_COLUMNS} FROM facts WHERE id IN ({marks})", chunk
                ).fetchall()
                for fact_id, name in conn.execute(
                    "SELECT fe.fact_id, e.name FROM fact_entities fe"
                    f" JOIN entities e ON e.id = fe.entity_id WHERE fe.fact_id IN ({marks})"
                    " ORDER BY fe.explicit DESC, e.id",
                    chunk,
                ).fetchall():
                    entities.setdefault(fact_id, []).append(name)
        return {row["id"]: Fact.from_row(row, tuple(entities.get(row["id"], ()))) for row in rows}

    def category_bundle(
        self, category: str
    ) -> tuple[hrr.Superposition, hrr.Superposition, int] | None:
        """(phasor sum of the category's facts, entity-association sum, fact count)."""
        with self._lock:
            return read_bundle(self._connection(), normalize_category(category))

    def fact_vector(self, fact_id: int) -> hrr.Vector | None:
        rows = self.read("SELECT vector FROM facts WHERE id = ?", (check_id(fact_id),))
        return hrr.decode_phases(rows[0][0]) if rows else None

    # -- writing -----------------------------------------------------------

    def _encode(
        self, category: str, content: str, entities: Sequence[str]
    ) -> tuple[hrr.Vector, bytes]:
        """The fact's vector as stored (quantised), so that adding it to a bundle and
        subtracting the stored copy later cancel exactly."""
        blob = hrr.encode_phases(
            encode_fact(category, content_words(content), entities, self.dimension)
        )
        return hrr.decode_phases(blob), blob

    def _link(
        self, conn: sqlite3.Connection, fact_id: int, names: Sequence[str], explicit: set[str]
    ) -> None:
        for name in names:
            conn.execute("INSERT OR IGNORE INTO entities (name) VALUES (?)", (name,))
            entity_id = conn.execute("SELECT id FROM entities WHERE name = ?", (name,)).fetchall()
            conn.execute(
                "INSERT INTO fact_entities (fact_id, entity_id, explicit) VALUES (?, ?, ?)"
                " ON CONFLICT(fact_id, entity_id) DO UPDATE SET"
                " explicit = MAX(explicit, excluded.explicit)",
                (fact_id, entity_id[0][0], int(name in explicit)),
            )

    @staticmethod
    def _linked(conn: sqlite3.Connection, fact_id: int) -> list[tuple[str, bool]]:
        rows = conn.execute(
            "SELECT e.name, fe.explicit FROM fact_entities fe JOIN entities e"
            " ON e.id = fe.entity_id WHERE fe.fact_id = ? ORDER BY fe.explicit DESC, e.id",
            (fact_id,),
        ).fetchall()
        return [(row[0], bool(row[1])) for row in rows]

    @staticmethod
    def _drop_orphans(conn: sqlite3.Connection, names: Sequence[str]) -> None:
        """Delete those of `names` that no fact links to any more."""
        for name in names:
            conn.execute(
                "DELETE FROM entities WHERE name = ? AND NOT EXISTS"
                " (SELECT 1 FROM fact_entities fe WHERE fe.entity_id = entities.id)",
                (name,),
            )

    def _insert(
        self, conn: sqlite3.Connection, new: NewFact, deltas: BundleDeltas, now: float
    ) -> tuple[int, bool]:
        content = check_content(new.content)
        category = normalize_category(new.category)
        explicit = explicit_entities(new.entities)
        key = normalize_content(content)
        existing = conn.execute(
            "SELECT id, category, vector FROM facts WHERE content_key = ?", (key,)
        ).fetchall()
        if existing:
            fact_id = int(existing[0]["id"])
            conn.execute(
                "UPDATE facts SET trust = ROUND(MIN(1.0, trust + ?), 6), last_used_at = ?"
                " WHERE id = ?",
                (DUPLICATE_TRUST_BUMP, now, fact_id),
            )
            linked = self._linked(conn, fact_id)
            known = [name for name, _ in linked]
            missing = [name for name in explicit if name not in known]
            if missing:  # the duplicate names entities the original lacked: re-encode
                old_category = existing[0]["category"]
                old_vector = hrr.decode_phases(existing[0]["vector"])
                deltas.remove(old_category, old_vector, known)
                self._link(conn, fact_id, missing, set(missing))
                names = known + missing
                row = conn.execute("SELECT content FROM facts WHERE id = ?", (fact_id,))
                vector, blob = self._encode(old_category, row.fetchall()[0][0], names)
                conn.execute("UPDATE facts SET vector = ? WHERE id = ?", (blob, fact_id))
                deltas.add(old_category, vector, names)
            return fact_id, False
        names = extract_entities(content, explicit)
        vector, blob = self._encode(category, content, names)
        cursor = conn.execute(
            "INSERT INTO facts (content, content_key, category, trust, created_at, updated_at,"
            " vector) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (content, key, category, DEFAULT_TRUST, now, now, blob),
        )
        fact_id = int(cursor.lastrowid or 0)
        self._link(conn, fact_id, names, set(explicit))
        deltas.add(category, vector, names)
        return fact_id, True

    def add(
        self, content: str, *, category: str | None = None, entities: Sequence[str] = ()
    ) -> AddResult:
        """Store a fact; the same statement again (ignoring case, spacing and final
        punctuation) raises the existing fact's trust instead of duplicating it."""
        return self.add_many([NewFact(content, category, entities)])[0]

    def add_many(self, facts: Iterable[NewFact]) -> list[AddResult]:
        """Several facts in one transaction (all or none)."""
        batch = list(facts)
        deltas = BundleDeltas(self.dimension)
        outcomes: list[tuple[int, bool]] = []
        with self._transaction() as conn:
            now = self.clock()
            for new in batch:
                outcomes.append(self._insert(conn, new, deltas, now))
            deltas.apply(conn)
        loaded = self.load_facts([fact_id for fact_id, _ in outcomes])
        return [AddResult(loaded[fact_id], created) for fact_id, created in outcomes]

    def update(
        self,
        fact_id: int,
        *,
        content: str | None = None,
        category: str | None = None,
        entities: Sequence[str] | None = None,
    ) -> Fact:
        """Change a fact's text and/or category (entities are re-extracted; explicit
        ones are kept, and `entities` adds more)."""
        check_id(fact_id)
        if content is None and category is None and entities is None:
            raise ValueError("update needs content, category or entities to change")
        new_content = None if content is None else check_content(content)
        explicit = explicit_entities(entities)
        deltas = BundleDeltas(self.dimension)
        with self._transaction() as conn:
            rows = conn.execute(
                "SELECT content, category, vector FROM facts WHERE id = ?", (fact_id,)
            ).fetchall()
            if not rows:
                raise ValueError(f"no fact #{fact_id}: search first to find the right id")
            old = rows[0]
            linked = self._linked(conn, fact_id)
            deltas.remove(old["category"], hrr.decode_phases(old["vector"]), [n for n, _ in linked])
            text = old["content"] if new_content is None else new_content
            cat = old["category"] if category is None else normalize_category(category)
            if new_content is not None:
                key = normalize_content(text)
                clash = conn.execute(
                    "SELECT id FROM facts WHERE content_key = ? AND id != ?", (key, fact_id)
                ).fetchall()
                if clash:
                    raise ValueError(
                        f"fact #{clash[0][0]} already says this; remove #{fact_id} instead, "
                        "or give feedback on the existing fact"
                    )
            else:
                key = normalize_content(text)
            kept = [name for name, was_explicit in linked if was_explicit]
            explicit_all = kept + [name for name in explicit if name not in kept]
            names = extract_entities(text, explicit_all)
            vector, blob = self._encode(cat, text, names)
            conn.execute(
                "UPDATE facts SET content = ?, content_key = ?, category = ?, vector = ?,"
                " updated_at = ? WHERE id = ?",
                (text, key, cat, blob, self.clock(), fact_id),
            )
            conn.execute("DELETE FROM fact_entities WHERE fact_id = ?", (fact_id,))
            self._link(conn, fact_id, names, set(explicit_all))
            self._drop_orphans(conn, [name for name, _ in linked if name not in names])
            deltas.add(cat, vector, names)
            deltas.apply(conn)
        fact = self.get(fact_id)
        assert fact is not None
        return fact

    def remove(self, fact_id: int) -> Fact:
        """Delete a fact; returns what it said."""
        fact = self.get(check_id(fact_id))
        if fact is None:
            raise ValueError(f"no fact #{fact_id}: search first to find the right id")
        deltas = BundleDeltas(self.dimension)
        with self._transaction() as conn:
            rows = conn.execute(
                "SELECT category, vector FROM facts WHERE id = ?", (fact_id,)
            ).fetchall()
            if not rows:
                raise ValueError(f"no fact #{fact_id}")
            names = [name for name, _ in self._linked(conn, fact_id)]
            deltas.remove(rows[0]["category"], hrr.decode_phases(rows[0]["vector"]), names)
            conn.execute("DELETE FROM facts WHERE id = ?", (fact_id,))
            self._drop_orphans(conn, names)
            deltas.apply(conn)
        return fact

    def feedback(self, fact_id: int, helpful: bool) -> Fact:
        """Helpful raises trust by HELPFUL_STEP, unhelpful lowers it by UNHELPFUL_STEP
        (bounded to [0, 1]); the matching counter goes up either way."""
        check_id(fact_id)
        if not isinstance(helpful, bool):
            raise ValueError(f"helpful must be true or false, got {helpful!r}")
        step = HELPFUL_STEP if helpful else -UNHELPFUL_STEP
        counter = "helpful_count" if helpful else "unhelpful_count"
        with self._transaction() as conn:
            cursor = conn.execute(
                f"UPDATE facts SET trust = ROUND(MIN(1.0, MAX(0.0, trust + ?)), 6),"
                f" {counter} = {counter} + 1,"
                " last_used_at = ? WHERE id = ?",
                (step, self.clock(), fact_id),
            )
            if cursor.rowcount == 0:
                raise ValueError(f"no fact #{fact_id}: search first to find the right id")
        fact = self.get(fact_id)
        assert fact is not None
        return fact

    def mark_used(self, fact_ids: Sequence[int]) -> None:
        """Record that these facts were just shown to the model."""
        ids = [check_id(i) for i in fact_ids]
        if not ids:
            return
        with self._transaction() as conn:
            conn.execute(
                f"UPDATE facts SET last_used_at = ? WHERE id IN ({', '.join('?' for _ in ids)})",
                [self.clock(), *ids],
            )

    def rebuild(self, dimension: int) -> None:
        """Re-encode every fact and bundle at `dimension` (one transaction)."""
        if isinstance(dimension, bool) or not isinstance(dimension, int) or dimension < 16:
            raise ValueError(f"dimension must be an int >= 16, got {dimension!r}")
        deltas = BundleDeltas(dimension)
        with self._transaction() as conn:
            self.dimension = dimension
            try:
                conn.execute("DELETE FROM category_bundles")
                rows = conn.execute("SELECT id, content, category FROM facts").fetchall()
                for row in rows:
                    names = [name for name, _ in self._linked(conn, row["id"])]
                    vector, blob = self._encode(row["category"], row["content"], names)
                    conn.execute("UPDATE facts SET vector = ? WHERE id = ?", (blob, row["id"]))
                    deltas.add(row["category"], vector, names)
                deltas.apply(conn)
                conn.execute(
                    "INSERT INTO meta (key, value) VALUES ('dimension', ?)"
                    " ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                    (str(dimension),),
                )
            except BaseException:
                stored = conn.execute("SELECT value FROM meta WHERE key = 'dimension'").fetchall()
                self.dimension = int(stored[0][0]) if stored else self.dimension
                raise

    def put_meanings(
        self, model: str, rows: Sequence[tuple[int, str, bytes]], window_start: int = 0
    ) -> int:
        """Store (fact id, the text embedded, vector) rows of `model` (meanings.py);
        a row whose fact was removed or whose text changed since it was read is
        skipped; the vectors of facts older than `window_start` are dropped (another
        model's are replaced as they are made again). Returns how many were written."""
        written = 0
        with self._transaction() as conn:
            conn.execute("DELETE FROM fact_meanings WHERE fact_id < ?", (window_start,))
            for fact_id, text, blob in rows:
                written += conn.execute(
                    "INSERT OR REPLACE INTO fact_meanings (fact_id, model, vector)"
                    " SELECT id, ?, ? FROM facts WHERE id = ? AND content = ?",
                    (model, blob, fact_id, text),
                ).rowcount
        return written

    # -- recall (search.py, analysis.py, contradictions.py) ----------------

    def search(
        self,
        query: str,
        *,
        limit: int | None = None,
        category: str | None = None,
        min_trust: float | None = None,
    ) -> list[FactHit]:
        meanings.index_for_search(self)
        return search_facts(
            self,
            query,
            limit=self.max_results if limit is None else limit,
            category=category,
            min_trust=self.min_trust if min_trust is None else min_trust,
        )

    def probe(self, category: str, entity: str, *, limit: int | None = None) -> list[FactHit]:
        return analysis.probe(self, category, entity, limit=limit or self.max_results)

    def related(self, entity: str, *, limit: int | None = None) -> list[FactHit]:
        return analysis.related(self, entity, limit=limit or self.max_results)

    def reason(self, entities: Sequence[str], *, limit: int | None = None) -> list[FactHit]:
        return analysis.reason(self, entities, limit=limit or self.max_results)

    def contradict(
        self, *, limit: int | None = None, entity: str | None = None, fact_id: int | None = None
    ) -> list[Contradiction]:
        return find_contradictions(
            self, limit=limit or self.max_results, entity=entity, fact_id=fact_id
        )

    def decay(self, fact: Fact, now: float | None = None) -> float:
        """The time-decay factor for `fact` (1.0 when decay is off)."""
        return self.decay_at(fact.updated_at, fact.last_used_at, now)

    def decay_at(
        self, updated_at: float, last_used_at: float | None, now: float | None = None
    ) -> float:
        """0.5 ** (days since the fact was last changed or used / half-life)."""
        if self.decay_half_life_days is None:
            return 1.0
        now = self.clock() if now is None else now
        age_days = max(0.0, now - max(updated_at, last_used_at or 0.0)) / 86400.0
        return float(0.5 ** (age_days / self.decay_half_life_days))
