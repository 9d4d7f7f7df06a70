"""session_search groups hits by conversation: which further hits are listed under a
conversation's best one (only those among the best MORE_MATCHES_WITHIN overall)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from herald.memory.hybrid import RankedHit
from herald.memory.session_search import MORE_MATCHES_WITHIN, SessionSearch
from herald.state import StateStore


@pytest.fixture
def store(tmp_path: Path) -> Iterator[StateStore]:
    with StateStore(tmp_path / "state.db") as opened:
        yield opened


def _hit(store: StateStore, sid: str, score: float) -> RankedHit:
    (message,) = store.append_messages(sid, [{"role": "user", "content": "words"}])
    return RankedHit(
        message_id=message.id, session_id=sid, role="user", snippet="words",
        created_at=0.0, active=True, score=score, ranks={"fts": 0},
    )  # fmt: skip


def test_a_weak_hit_is_counted_but_not_listed_under_its_conversation(store: StateStore) -> None:
    main = store.create_session()
    best, second = _hit(store, main, 1.0), _hit(store, main, 0.99)
    others = [_hit(store, store.create_session(), 0.5) for _ in range(MORE_MATCHES_WITHIN)]
    weak = _hit(store, main, 0.01)
    hits = [best, second, *others, weak]
    assert hits.index(weak) >= MORE_MATCHES_WITHIN
    groups = SessionSearch(store)._group(hits)
    assert len(groups) == 1 + MORE_MATCHES_WITHIN
    first = groups[0]
    assert first["hit"] is best and first["count"] == 3
    assert first["more"] == [second]  # `weak` would be read before the next conversation


def test_a_tie_moved_to_the_newer_session_keeps_the_older_hit_listed(store: StateStore) -> None:
    parent = store.create_session()
    child = store.create_session(parent_id=parent)
    older = _hit(store, parent, 0.5)
    filler = [_hit(store, store.create_session(), 0.4) for _ in range(MORE_MATCHES_WITHIN)]
    newer = _hit(store, child, 0.5)  # same score, past the listing cut-off
    groups = SessionSearch(store)._group([older, *filler, newer])
    assert groups[0]["hit"] is newer  # copied content lives in the newest session
    assert groups[0]["more"] == [older]
