"""Message vectors: embedding stored messages with the bundled MiniLM, and the
nearest messages to a query by cosine similarity (numpy, brute force).

Optional all the way: without numpy or the model package (`minilm.INSTALL_HINT`),
`available()` is False and search is full-text only. Vectors live in state.db
(`herald.state.search_vectors`); they are made lazily, a bounded batch per search,
so no turn waits for a whole history to be embedded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from herald.memory import minilm

PENDING_PER_QUERY = 32  # messages embedded before a search (the rest on later ones)
BATCH = 32
# Below this cosine similarity a message is not about the query: MiniLM puts unrelated
# sentences near 0.0-0.2, so without a floor every search "finds" something.
MIN_SIMILARITY = 0.3


def available() -> bool:
    return minilm.numpy_installed() and minilm.model_dir() is not None


@dataclass(frozen=True)
class VectorHit:
    message_id: int
    similarity: float


def index_pending(store: Any, limit: int | None = PENDING_PER_QUERY) -> int:
    """Embed up to `limit` messages without a vector (None: all); returns how many."""
    model = minilm.load()
    if model is None:
        return 0
    done = 0
    while limit is None or done < limit:
        size = BATCH if limit is None else min(BATCH, limit - done)
        batch = store.pending_vectors(minilm.MODEL_ID, size)
        if not batch:
            break
        vectors = model.embed([text for _, text in batch])
        store.put_vectors(
            minilm.MODEL_ID,
            [(message_id, vectors[i].tobytes()) for i, (message_id, _) in enumerate(batch)],
        )
        done += len(batch)
    return done


def embed_query(text: str) -> Any | None:
    """The query's vector; None without the model, or when the model knows none of its
    words (a vector of [UNK]s is near everything and means nothing)."""
    model = minilm.load()
    if model is None:
        return None
    tokenizer = model.tokenizer
    special = {tokenizer.unk, tokenizer.cls, tokenizer.sep}
    if all(token in special for token in tokenizer.encode(text)):
        return None
    return model.embed([text])[0]


def nearest(
    store: Any,
    query_vector: Any,
    *,
    limit: int,
    identity: str | None,
    session_id: str | None,
    exclude_session_id: str | None,
) -> list[VectorHit]:
    """The `limit` stored messages most similar to `query_vector`, best first (ties:
    the newer message first)."""
    import numpy as np

    rows = store.load_vectors(
        minilm.MODEL_ID,
        identity=identity,
        session_id=session_id,
        exclude_session_id=exclude_session_id,
    )
    if not rows:
        return []
    ids = np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows))
    matrix = np.frombuffer(b"".join(row[1] for row in rows), dtype=np.float32)
    matrix = matrix.reshape(len(rows), minilm.DIMENSION)
    scores = matrix @ query_vector.astype(np.float32)
    top = min(limit, len(rows))
    picked = np.argpartition(-scores, top - 1)[:top]
    ordered = sorted(picked.tolist(), key=lambda i: (-float(scores[i]), -int(ids[i])))
    return [
        VectorHit(int(ids[i]), float(scores[i])) for i in ordered if scores[i] >= MIN_SIMILARITY
    ]
