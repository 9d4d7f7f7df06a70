"""Facts by meaning: each fact's sentence vector (the `memory` extra's MiniLM), so
that "what colour scheme do I like?" finds "Kim prefers dark mode", which shares no
word with it.

Optional all the way: without the model (`herald.memory.minilm.load()` is None),
`index_pending` does nothing and `scores` is None, and fact search is words and HRR
only, as before. The vectors live in facts.db (`fact_meanings`, schema step 2); a
trigger drops a fact's vector when its text changes and the foreign key when it is
removed, so a stale meaning is never scored. They are made lazily, newest facts
first, before a search: at most INDEX_PER_SEARCH a search, so a store that predates
the model, or an import, is embedded by a background thread instead of stalling
one; only the WINDOW newest facts have one. Each process keeps
a store's vectors in memory and reloads them only when the table has changed.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Protocol

import herald.memory.minilm as minilm
import herald.memory.semantic as semantic

INDEX_PER_SEARCH = 32  # a backlog up to this is embedded inline, before the search
BATCH = 32
# Only the newest facts have meanings: a store past this many keeps finding its older
# facts by words and HRR, and the vectors held in memory stay under ~31 MB.
WINDOW = 20_000
# MiniLM puts unrelated sentences at a cosine of 0.0-0.2: below the floor, a fact is
# not a candidate by meaning (its words can still make it one).
MIN_SIMILARITY = 0.3


class MeaningStore(Protocol):
    """What this module needs of `FactStore` (it is given the store, never imports it)."""

    path: Any

    def read(self, sql: str, params: Any = ()) -> list[Any]: ...

    def put_meanings(
        self, model: str, rows: list[tuple[int, str, bytes]], window_start: int
    ) -> int: ...


def _stored(store: MeaningStore) -> tuple[int, int]:
    """(vectors stored, highest seq), from indexes (the fact_id one, the rowid), never
    the vectors' pages: it changes whenever a vector is written or dropped."""
    count, top = store.read("SELECT COUNT(*), COALESCE(MAX(seq), 0) FROM fact_meanings")[0]
    return int(count), int(top)


def _state(store: MeaningStore) -> tuple[int, int, int]:
    """(newest fact id, vectors stored, highest vector seq): a new fact moves the
    first; a changed or removed fact's vector, dropped, the others."""
    newest = store.read("SELECT COALESCE(MAX(id), 0) FROM facts")[0][0]
    return (int(newest), *_stored(store))


def _window_start(newest: int) -> int:
    """The lowest fact id that has a meaning: the WINDOW ids up to the newest."""
    return max(0, newest - WINDOW + 1)


def _pending(store: MeaningStore, start: int, limit: int) -> list[Any]:
    """Up to `limit` facts from id `start` with no vector, newest first. The walk goes
    over the narrow facts_updated index, not the table (whose rows hold HRR vectors):
    2.5 ms instead of 6.6 ms at 5,000 facts."""
    rows = store.read(
        "SELECT f.id FROM facts f INDEXED BY facts_updated WHERE f.id >= ?"
        " AND NOT EXISTS (SELECT 1 FROM fact_meanings m WHERE m.fact_id = f.id)"
        " ORDER BY f.id DESC LIMIT ?",
        (start, limit),
    )
    if not rows:
        return []
    ids = [int(row[0]) for row in rows]
    found = store.read(
        f"SELECT id, content FROM facts WHERE id IN ({', '.join('?' for _ in ids)})"
        " ORDER BY id DESC",
        ids,
    )
    return list(found)


def index_pending(store: MeaningStore, limit: int | None = INDEX_PER_SEARCH) -> int:
    """Embed up to `limit` facts (None: all) of the window that have no vector yet,
    newest first; returns how many were embedded."""
    model = minilm.load()  # None without numpy or the model package
    if model is None:
        return 0
    done = 0
    start = _window_start(_state(store)[0])
    while limit is None or done < limit:
        size = BATCH if limit is None else min(BATCH, limit - done)
        rows = _pending(store, start, size)
        if not rows:
            break
        vectors = model.embed([row[1] for row in rows])
        written = store.put_meanings(
            minilm.MODEL_ID,
            [(int(row[0]), row[1], vectors[i].tobytes()) for i, row in enumerate(rows)],
            start,
        )
        done += len(rows)
        if written < len(rows):  # facts changed meanwhile: the next search takes them
            break
    return done


# Per store file: its `_state` when nothing was left to embed (a search that finds the
# same state has nothing to check).
_settled: dict[str, tuple[int, int, int]] = {}


def index_for_search(store: MeaningStore) -> None:
    """Before a search: up to INDEX_PER_SEARCH facts without a meaning (the ones just
    added) are embedded now; a longer backlog (a store from before the model, an
    import) by one background thread per file, while searches use what is made."""
    if minilm.load() is None:
        return
    key = f"facts:{getattr(store, 'path', id(store))}"
    state = _state(store)
    if _settled.get(key) == state or semantic.backlog_running(key):
        return
    start = _window_start(state[0])
    if len(_pending(store, start, INDEX_PER_SEARCH + 1)) > INDEX_PER_SEARCH:
        semantic.embed_backlog(key, lambda: index_pending(store, None), "fact-meanings")
        return
    index_pending(store, INDEX_PER_SEARCH)
    if not _pending(store, start, 1):
        _settled[key] = _state(store)


@dataclass
class _Loaded:
    key: tuple[int, int] = (0, 0)  # (rows, highest seq) of the table when loaded
    ids: Any = None
    matrix: Any = None


@dataclass
class MeaningScores:
    """One query's cosine similarity to every fact that has a vector (`ids` ascending)."""

    ids: Any
    sims: Any

    def get(self, fact_id: int) -> float:
        import numpy as np

        at = int(np.searchsorted(self.ids, fact_id))
        found = at < len(self.ids) and int(self.ids[at]) == fact_id
        return float(self.sims[at]) if found else 0.0

    def best(self, want: int, floor: float = MIN_SIMILARITY) -> list[int]:
        """Up to `want` fact ids at or above `floor`, most similar first (ties: newer)."""
        import numpy as np

        above = np.flatnonzero(self.sims >= floor)
        if want <= 0 or len(above) == 0:
            return []
        if len(above) > want:
            above = above[np.argpartition(-self.sims[above], want - 1)[:want]]
        ordered = sorted(above.tolist(), key=lambda i: (-float(self.sims[i]), -int(self.ids[i])))
        return [int(self.ids[i]) for i in ordered]


_cache: dict[str, _Loaded] = {}
_cache_lock = threading.Lock()


def _loaded(store: MeaningStore, model_id: str) -> _Loaded:
    import numpy as np

    mark = _stored(store)
    key = str(getattr(store, "path", id(store)))
    loaded = _cache.get(key)
    if loaded is None or loaded.key != mark:
        rows = store.read(
            "SELECT fact_id, vector FROM fact_meanings WHERE model = ? ORDER BY fact_id",
            (model_id,),
        )
        loaded = _cache[key] = _Loaded(
            mark,
            np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows)),
            np.frombuffer(b"".join(row[1] for row in rows), dtype=np.float32).reshape(
                len(rows), minilm.DIMENSION
            ),
        )
    return loaded


def scores(store: MeaningStore, query: str) -> MeaningScores | None:
    """The query's similarity to each fact's meaning; None without the model or when
    the model cannot read the query (`semantic.embed_query`)."""
    vector = semantic.embed_query(query)  # None without the model too
    if vector is None:
        return None
    with _cache_lock:
        loaded = _loaded(store, minilm.MODEL_ID)
    return MeaningScores(loaded.ids, loaded.matrix @ vector.astype(loaded.matrix.dtype))
