"""Search cost stays bounded at any history size: a word in more than RANK_CAP messages
must match but does not rank (a query of only such words lists matches newest first),
rare words are not crowded out by common ones, and substring scans read only the
newest rows. The caps are made small here so a few rows show them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import herald.state.search as fts
from herald.state import StateStore


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[StateStore]:
    monkeypatch.setattr(fts, "RANK_CAP", 3)
    monkeypatch.setattr(fts, "SUBSTRING_SCAN_ROWS", 4)
    with StateStore(tmp_path / "state.db") as opened:
        yield opened


def _add(store: StateStore, texts: list[str], identity: str = "owner") -> list[int]:
    sid = store.create_session(identity=identity)
    return [
        m.id for m in store.append_messages(sid, [{"role": "user", "content": t} for t in texts])
    ]


def test_a_query_of_only_common_words_lists_matches_newest_first(store: StateStore) -> None:
    # The oldest message is the best bm25 match (short, the word twice), but bm25 is
    # not computed for a word in more than RANK_CAP messages.
    ids = _add(
        store, ["deploy deploy"] + [f"we deploy the thing number {i} today" for i in range(6)]
    )
    found = store.search_messages("deploy", limit=10)
    assert [hit.message_id for hit in found] == list(reversed(ids))
    assert {hit.rank for hit in found} == {0.0}


def test_a_common_word_must_match_but_only_rare_ones_rank(store: StateStore) -> None:
    ids = _add(
        store,
        [
            "deploy the canary canary now",  # best for canary
            "the canary sings",  # no deploy: must not match
            *[f"we deploy build {i}" for i in range(5)],
            "deploy with a canary",
        ],
    )
    found = [hit.message_id for hit in store.search_messages("deploy canary", limit=10)]
    assert found == [ids[0], ids[-1]]


def test_fewer_matches_than_the_cap_are_all_ranked(store: StateStore) -> None:
    ids = _add(store, ["deploy deploy", "we deploy it", "nothing here"])
    found = [hit.message_id for hit in store.search_messages("deploy", limit=10)]
    assert found == [ids[0], ids[1]]  # bm25 order over every match


def test_the_window_counts_only_the_callers_identity(store: StateStore) -> None:
    (mine,) = _add(store, ["deploy the canary"], identity="alice")
    _add(store, [f"deploy {i}" for i in range(8)], identity="bob")  # newer, someone else's
    found = store.search_messages("deploy", limit=10, identity="alice")
    assert [hit.message_id for hit in found] == [mine]


def test_a_rare_word_is_not_crowded_out_by_a_common_one(store: StateStore) -> None:
    (rare,) = _add(store, ["the quokka escaped"])
    _add(store, [f"the day number {i}" for i in range(8)])
    hits = store.search_messages_relaxed("the quokka zoo", limit=5)
    assert [hit.message_id for hit in hits][:1] == [rare]


def test_substring_scans_read_the_newest_rows_only(store: StateStore) -> None:
    (old,) = _add(store, ["我们需要规划数据库迁移"])
    new = _add(store, ["filler one", "filler two", "我们讨论了数据库迁移的时间", "filler three"])
    found = [hit.message_id for hit in store.search_messages("数据库迁移", limit=10)]
    assert found == [new[2]]
    assert old not in found
