"""Hybrid ranking: the words the any-word search looks for (stems; the names of the
people who speak in the history left to the name boost)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from herald.memory import hybrid
from herald.memory.hybrid import rank_messages, relaxed_terms
from herald.state import StateStore


@pytest.fixture
def store(tmp_path: Path) -> Iterator[StateStore]:
    with StateStore(tmp_path / "state.db") as opened:
        yield opened


def _said(store: StateStore, turns: list[tuple[str, str]], identity: str = "owner") -> list[int]:
    sid = store.create_session(identity=identity)
    stored = store.append_messages(sid, [{"role": r, "content": t} for r, t in turns])
    return [m.id for m in stored]


def _ids(hits) -> list[int]:
    return [h.message_id for h in hits]


def test_relaxed_terms_are_stems_without_the_speakers_names() -> None:
    assert relaxed_terms("Which cities has Jon visited?", {"jon"}) == ["citi", "visit"]
    assert relaxed_terms("What did Caroline research?", {"caroline"}) == ["research"]
    assert relaxed_terms("Where is Caroline?", {"caroline"}) == ["caroline"]  # alone, it stays
    assert relaxed_terms("what is it", set()) == []


def test_a_name_nobody_speaks_under_is_a_word_like_any_other() -> None:
    # Jon talks in this history, LeBron only comes up: his name is what it is about.
    assert relaxed_terms("What does Jon like about Lebron?", {"jon"}) == ["like", "lebron"]
    assert relaxed_terms("What did Caroline research?", set()) == ["caroline", "research"]


def test_the_speakers_are_the_identities_the_history_holds(store: StateStore) -> None:
    _said(store, [("user", "hi")], "jon")
    _said(store, [("user", "hello")], "tim")
    assert store.identities_among(["jon", "lebron", "tim", "owner"]) == {"jon", "tim"}
    assert store.identities_among([]) == set()
    assert hybrid.people(store, "What does Jon tell Tim about LeBron James?") == {"jon", "tim"}
    assert hybrid.people(store, "what about the deploy") == set()


def test_a_name_only_talked_about_still_finds_its_message(store: StateStore) -> None:
    # The answer shares no other word with the question ("love", not "like"); with
    # every name dropped from the any-word search, only Jon's "like"s were candidates.
    (lebron,) = _said(
        store, [("user", "LeBron is the man - love his skills and leadership.")], "jon"
    )
    for n in range(60):
        _said(store, [("user", f"I like idea number {n}, Tim")], "jon")
        _said(store, [("user", f"Jon, I like plan {n} too")], "tim")
    hits = rank_messages(
        store, "What does Jon like about Lebron James?", limit=5, use_vectors=False
    )
    assert _ids(hits)[:1] == [lebron]


def test_a_stem_finds_another_form_of_the_word(store: StateStore) -> None:
    (trip,) = _said(store, [("user", "we are visiting Rome next spring")], "jon")
    (greeting,) = _said(store, [("user", "Go get them, Jon!")], "gina")
    hits = rank_messages(store, "Which cities has Jon visited?", limit=5, use_vectors=False)
    assert _ids(hits)[:1] == [trip]  # not the message that only says his name
    assert greeting not in _ids(hits)
