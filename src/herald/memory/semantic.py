"""Message vectors: embedding stored messages with the bundled MiniLM, and the
nearest messages to a query by cosine similarity (numpy, brute force).

Optional all the way: without numpy or the model package (`minilm.INSTALL_HINT`),
`available()` is False and search is full-text only. Vectors live in state.db
(`herald.state.search_vectors`, the newest 50,000 messages); they are made lazily
(newest first): the few new messages since the last search inline, a longer backlog
by a background thread, so no search waits for a whole history to be embedded. Each process keeps a database's window of vectors in memory and tops it up
from what was written since, so a search reads only new rows.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import herald.memory.minilm as minilm

PENDING_PER_QUERY = 32  # a backlog up to this is embedded before a search, inline
BATCH = 32
log = logging.getLogger(__name__)
# Below this cosine similarity a message is not about the query: MiniLM puts unrelated
# sentences near 0.0-0.2, so without a floor every search "finds" something.
MIN_SIMILARITY = 0.3
# A message's meaning score is averaged with those of the messages said just before and
# after it in the same place: "Sure, I can give it to you tomorrow!" is about the
# recipe asked for just before. On LoCoMo, vectors alone: hit@10 0.632 -> 0.674.
NEIGHBOUR_BEFORE = 0.35
NEIGHBOUR_AFTER = 0.175
NEIGHBOUR_SECONDS = 3600.0  # further apart than this, two messages are not one exchange


def available() -> bool:
    return minilm.numpy_installed() and minilm.model_dir() is not None


@dataclass(frozen=True)
class VectorHit:
    message_id: int
    similarity: float


# Per database path: (its history's name, the id up to which every message has a vector).
_complete_up_to: dict[str, tuple[str, int]] = {}


def index_pending(store: Any, limit: int | None = PENDING_PER_QUERY) -> int:
    """Embed up to `limit` messages without a vector (None: all); returns how many."""
    model = minilm.load()
    if model is None:
        return 0
    key = str(getattr(store, "path", id(store)))
    done = 0
    # First: a message added during the walk is left to the next call.
    history, newest = store.message_high_water()
    known_history, after = _complete_up_to.get(key, ("", 0))
    if known_history != history:  # another file at this path
        after = 0
    below = newest + 1  # the walk goes newest first; below it, all is done
    while limit is None or done < limit:
        size = BATCH if limit is None else min(BATCH, limit - done)
        batch = store.pending_vectors(minilm.MODEL_ID, size, after, below)
        if not batch:
            # Everything up to the newest message has a vector: later calls look only
            # past it, instead of walking the whole window to find nothing.
            _complete_up_to[key] = (history, max(after, newest))
            break
        vectors = model.embed([text for _, text in batch])
        store.put_vectors(
            minilm.MODEL_ID,
            [(message_id, vectors[i].tobytes()) for i, (message_id, _) in enumerate(batch)],
        )
        done += len(batch)
        below = min(message_id for message_id, _ in batch)
    return done


_background: dict[str, threading.Thread] = {}
_background_lock = threading.Lock()


def backlog_running(key: str) -> threading.Thread | None:
    """The thread embedding `key`'s backlog, while it runs."""
    with _background_lock:
        running = _background.get(key)
    return running if running is not None and running.is_alive() else None


def embed_backlog(key: str, work: Callable[[], object], what: str) -> None:
    """Run `work()` (embedding a whole backlog) on one daemon thread per `key`, unless
    one already runs; an error stops it quietly (a closed store, a busy file): the
    next search starts it again."""

    def run() -> None:
        try:
            work()
        except Exception:
            log.debug("background embedding of %s stopped", what, exc_info=True)

    with _background_lock:
        running = _background.get(key)
        if running is not None and running.is_alive():
            return
        thread = _background[key] = threading.Thread(target=run, name=f"herald-{what}", daemon=True)
    thread.start()


def index_for_search(store: Any) -> None:
    """Before a search: a backlog of at most PENDING_PER_QUERY messages (the latest turns)
    is embedded now, so the search sees them; a longer one (a history from before the
    model was installed) is embedded by one background thread per database, and
    searches meanwhile use the vectors already made instead of waiting."""
    key = str(getattr(store, "path", id(store)))
    if backlog_running(key):
        return
    history, _newest = store.message_high_water()
    known_history, after = _complete_up_to.get(key, ("", 0))
    backlog = store.pending_vectors(
        minilm.MODEL_ID, PENDING_PER_QUERY + 1, after if known_history == history else 0
    )
    if len(backlog) <= PENDING_PER_QUERY:
        index_pending(store)
        return
    embed_backlog(key, lambda: index_pending(store, limit=None), "vectors")


def embed_query(text: str) -> Any | None:
    """The query's vector (read-only); None without the model, or when the model knows
    none of its words (a vector of [UNK]s is near everything and means nothing). The
    last few queries' are kept: one message's recall asks each fact store in turn."""
    if minilm.load() is None:
        return None
    return _embedded(text)


@functools.lru_cache(maxsize=16)
def _embedded(text: str) -> Any | None:
    model = minilm.load()
    tokenizer = model.tokenizer
    special = {tokenizer.unk, tokenizer.cls, tokenizer.sep}
    if all(token in special for token in tokenizer.encode(text)):
        return None
    vector = model.embed([text])[0]
    vector.flags.writeable = False
    return vector


class _Vectors:
    """One database's window of vectors in memory, topped up from `seq` on each search."""

    def __init__(self) -> None:
        import numpy as np

        self.seq = 0
        self.name = ""  # the file's vectors' name (herald.state.search_vectors)
        self.ids = np.zeros(0, dtype=np.int64)
        self.identities = np.zeros(0, dtype=object)
        self.sessions = np.zeros(0, dtype=object)
        self.places = np.zeros(0, dtype=object)  # chat, else session (load_since)
        self.times = np.zeros(0, dtype=np.float64)
        self.matrix = np.zeros((0, minilm.DIMENSION), dtype=np.float32)
        self._links: tuple[Any, Any] | None = None
        self._last: tuple[bytes, str | None, Any] | None = None  # the last query's scores

    def refresh(self, store: Any) -> None:
        import numpy as np

        rows, floor, name = store.load_vectors_since(minilm.MODEL_ID, self.seq, self.name)
        if name != self.name:  # another file's vectors (a restore): start over
            self.__init__()  # type: ignore[misc]
            self.name = name
        keep = self.ids > floor
        if rows:
            self.seq = rows[-1][0]
            new_ids = np.fromiter((r[1] for r in rows), dtype=np.int64, count=len(rows))
            keep &= ~np.isin(self.ids, new_ids)  # a re-made vector replaces the old one
            fresh = np.frombuffer(b"".join(r[5] for r in rows), dtype=np.float32)
            self.ids = np.concatenate([self.ids[keep], new_ids])
            for column, index, kind in _COLUMNS:
                old = getattr(self, column)[keep]
                new = np.array([r[index] for r in rows], dtype=kind)
                setattr(self, column, np.concatenate([old, new]))
            self.matrix = np.concatenate(
                [self.matrix[keep], fresh.reshape(len(rows), minilm.DIMENSION)]
            )
            self._links = self._last = None
        elif not keep.all():
            self.ids, self.matrix = self.ids[keep], self.matrix[keep]
            for column, _index, _kind in _COLUMNS:
                setattr(self, column, getattr(self, column)[keep])
            self._links = self._last = None

    def links(self) -> tuple[Any, Any]:
        """For each row, the row said just before it and just after it in the same
        place within NEIGHBOUR_SECONDS (-1: none), worked out once per change."""
        import numpy as np

        if self._links is None:
            count = len(self.ids)
            codes: dict[str, int] = {}
            place = np.fromiter(
                (codes.setdefault(p, len(codes)) for p in self.places), np.int64, count
            )
            order = np.lexsort((self.ids, place))
            together = (place[order][1:] == place[order][:-1]) & (
                np.abs(np.diff(self.times[order])) <= NEIGHBOUR_SECONDS
            )
            before, after = np.full(count, -1), np.full(count, -1)
            before[order[1:][together]] = order[:-1][together]
            after[order[:-1][together]] = order[1:][together]
            self._links = (before, after)
        return self._links

    def scores(self, query_vector: Any, identity: str | None) -> Any:
        """Each row's meaning score for the query: its cosine similarity, averaged with
        its neighbours' (NEIGHBOUR_BEFORE, NEIGHBOUR_AFTER) where it has them. With
        `identity`, only that identity's neighbours count: another's words never move
        a scoped search's order (invariant 19). One search asks for its query's
        scores more than once (nearest, nearest in a span, the candidates'): the last
        query's are kept until the window changes."""
        import numpy as np

        query = query_vector.astype(np.float32)
        key = query.tobytes()
        if self._last is not None and self._last[:2] == (key, identity):
            return self._last[2]
        own = self.matrix @ query
        total, weight = own.copy(), np.ones(len(own), dtype=np.float32)
        for links, share in zip(self.links(), (NEIGHBOUR_BEFORE, NEIGHBOUR_AFTER), strict=True):
            present = links >= 0
            if identity is not None:
                present &= self.identities[links] == identity
            total += np.where(present, share * own[links], np.float32(0.0))
            weight += np.where(present, np.float32(share), np.float32(0.0))
        scores = total / weight
        self._last = (key, identity, scores)
        return scores


# The columns kept beside each vector: (attribute, index in a load_since row, dtype).
_COLUMNS = (
    ("identities", 2, object),
    ("sessions", 3, object),
    ("times", 4, "float64"),
    ("places", 6, object),
)


_cache: dict[str, _Vectors] = {}
_cache_lock = threading.Lock()


def _fresh(store: Any) -> _Vectors:
    """`store`'s window of vectors, topped up (call holding `_cache_lock`)."""
    key = str(getattr(store, "path", id(store)))
    vectors = _cache.get(key)
    if vectors is None:
        vectors = _cache[key] = _Vectors()
    vectors.refresh(store)
    return vectors


def similarities(
    store: Any, query_vector: Any, message_ids: list[int], identity: str | None = None
) -> dict[int, float]:
    """The meaning score (`_Vectors.scores`) of each of `message_ids` that has a vector
    (the candidates full text found, scored by meaning too)."""
    import numpy as np

    with _cache_lock:
        vectors = _fresh(store)
        ids = vectors.ids
        wanted = np.fromiter(message_ids, dtype=np.int64, count=len(message_ids))
        picked = np.flatnonzero(np.isin(ids, wanted))
        if len(picked) == 0:
            return {}
        scores = vectors.scores(query_vector, identity)[picked]
    return {int(ids[i]): float(score) for i, score in zip(picked, scores, strict=True)}


def nearest(
    store: Any,
    query_vector: Any,
    *,
    limit: int,
    identity: str | None,
    session_id: str | None,
    exclude_session_id: str | None,
    span: tuple[float, float] | None = None,
    floor: float = MIN_SIMILARITY,
) -> list[VectorHit]:
    """The `limit` stored messages most similar to `query_vector` (at least `floor`),
    best first; ties: the newer message first. With `identity`, only that identity's
    messages can be returned (invariant 19); with `span` (start, end), only those
    written in it."""
    import numpy as np

    with _cache_lock:
        vectors = _fresh(store)
        ids = vectors.ids
        mask = np.ones(len(ids), dtype=bool)
        if identity is not None:
            mask &= vectors.identities == identity
        if session_id is not None:
            mask &= vectors.sessions == session_id
        if exclude_session_id is not None:
            mask &= vectors.sessions != exclude_session_id
        if span is not None:
            mask &= (vectors.times >= span[0]) & (vectors.times < span[1])
        if limit <= 0 or not mask.any():
            return []
        # Score the whole window, then keep the rows allowed: selecting rows of the
        # matrix first copied it (60 MB at 40,000 vectors) on every search.
        scores = vectors.scores(query_vector, identity)
    if not mask.all():
        ids, scores = ids[mask], scores[mask]
    top = min(limit, len(ids))
    picked = np.argpartition(-scores, top - 1)[:top]
    ordered = sorted(picked.tolist(), key=lambda i: (-float(scores[i]), -int(ids[i])))
    return [VectorHit(int(ids[i]), float(scores[i])) for i in ordered if scores[i] >= floor]
