"""Hybrid ranking: the words the any-word search looks for (stems, people's names
left to the name boost)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

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


def test_relaxed_terms_are_stems_without_peoples_names() -> None:
    assert relaxed_terms("Which cities has Jon visited?") == ["citi", "visit"]
    assert relaxed_terms("What did Caroline research?") == ["research"]
    assert relaxed_terms("Where is Caroline?") == ["caroline"]  # a name alone stays
    assert relaxed_terms("what is it") == []


def test_a_stem_finds_another_form_of_the_word(store: StateStore) -> None:
    (trip,) = _said(store, [("user", "we are visiting Rome next spring")], "jon")
    (greeting,) = _said(store, [("user", "Go get them, Jon!")], "gina")
    hits = rank_messages(store, "Which cities has Jon visited?", limit=5, use_vectors=False)
    assert _ids(hits)[:1] == [trip]  # not the message that only says his name
    assert greeting not in _ids(hits)
