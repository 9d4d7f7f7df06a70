"""The holographic fact store (L2): facts the agent chose to remember, in a SQLite
file in the home, found by full-text search re-ranked with word overlap and
holographic reduced representations (phase vectors, numpy when available),
weighted by trust that the model's feedback moves; exposed to the model as the
`fact_store` tool through `HolographicProvider` (`memory.provider: holographic`)."""

from herald.memory.holographic.hrr import (
    atom,
    bind,
    bundle,
    bundle_capacity,
    expected_member_similarity,
    numpy_available,
    pure_python,
    rebuild,
    similarity,
    snr_capacity,
    unbind,
)
from herald.memory.holographic.provider import HolographicProvider
from herald.memory.holographic.records import AddResult, Contradiction, Fact, FactHit, NewFact
from herald.memory.holographic.schema import FactStoreError
from herald.memory.holographic.search import RankWeights
from herald.memory.holographic.store import FactStore
from herald.memory.holographic.tool import FACT_STORE_SCHEMA

__all__ = [
    "FACT_STORE_SCHEMA",
    "AddResult",
    "Contradiction",
    "Fact",
    "FactHit",
    "FactStore",
    "FactStoreError",
    "HolographicProvider",
    "NewFact",
    "RankWeights",
    "atom",
    "bind",
    "bundle",
    "bundle_capacity",
    "expected_member_similarity",
    "numpy_available",
    "pure_python",
    "rebuild",
    "similarity",
    "snr_capacity",
    "unbind",
]
