"""How facts and queries become vectors.

A fact is the bundle of role ⊗ filler pairs: bind(ROLE_CATEGORY, atom(category)),
bind(ROLE_ENTITY, atom(entity)) for each entity and bind(ROLE_WORD, atom(word))
for each content word. Two facts that share a word or an entity therefore share
a component and have a positive similarity; a query encoded the same way scores
facts by the components they have in common.
"""

from __future__ import annotations

from collections.abc import Sequence

import herald.memory.holographic.hrr as hrr

ROLE_CATEGORY = "role:category"
ROLE_ENTITY = "role:entity"
ROLE_WORD = "role:word"

# Entities say more about a fact than any one of its words.
_ENTITY_WEIGHT = 1.5
_CATEGORY_WEIGHT = 1.0
_WORD_WEIGHT = 1.0


def entity_atom(entity: str, dim: int) -> hrr.Vector:
    """The filler atom of an (already normalised) entity name."""
    return hrr.atom(f"entity:{entity}", dim)


def _pair(role: str, filler: str, dim: int) -> hrr.Codes:
    return hrr.bind_codes(hrr.codes(role, dim), hrr.codes(filler, dim))


def _components(
    words: Sequence[str], entities: Sequence[str], dim: int
) -> tuple[list[hrr.Codes], list[float]]:
    rows: list[hrr.Codes] = []
    weights: list[float] = []
    for entity in entities:
        rows.append(_pair(ROLE_ENTITY, f"entity:{entity}", dim))
        weights.append(_ENTITY_WEIGHT)
    for word in words:
        rows.append(_pair(ROLE_WORD, f"word:{word}", dim))
        weights.append(_WORD_WEIGHT)
    return rows, weights


def encode_fact(
    category: str, words: Sequence[str], entities: Sequence[str], dim: int
) -> hrr.Vector:
    rows, weights = _components(words, entities, dim)
    rows.insert(0, _pair(ROLE_CATEGORY, f"category:{category}", dim))
    weights.insert(0, _CATEGORY_WEIGHT)
    return hrr.bundle_codes(rows, weights)


def encode_query(words: Sequence[str], entities: Sequence[str], dim: int) -> hrr.Vector | None:
    """The vector a matching fact resembles (None when the query has no content)."""
    rows, weights = _components(words, entities, dim)
    return hrr.bundle_codes(rows, weights) if rows else None


def encode_entities(entities: Sequence[str], dim: int) -> hrr.Vector | None:
    """What a fact about all of `entities` resembles."""
    return encode_query((), entities, dim)
