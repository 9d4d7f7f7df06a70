"""FactStore writes: add/dedupe/update/remove keep the FTS index, entity links and
category bundles in sync; feedback moves trust within bounds; dimension rebuilds."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from herald.memory.holographic import FactStore, NewFact, hrr
from herald.memory.holographic.encoding import entity_atom
from herald.memory.holographic.schema import LATEST_VERSION


@pytest.fixture
def store(tmp_path: Path):
    with FactStore(tmp_path / "facts.db", dimension=256) as opened:
        yield opened


def fts_ids(store: FactStore, word: str) -> set[int]:
    rows = store.read("SELECT rowid FROM facts_fts WHERE facts_fts MATCH ?", (f'"{word}"',))
    return {int(row[0]) for row in rows}


def assert_in_sync(store: FactStore) -> None:
    """The FTS index matches the table, and each stored bundle equals the one
    recomputed from the category's current facts."""
    store.read("INSERT INTO facts_fts(facts_fts) VALUES ('integrity-check')")
    rows = store.read("SELECT id, category, vector FROM facts")
    by_category: dict[str, list[tuple[int, bytes]]] = {}
    for row in rows:
        by_category.setdefault(row["category"], []).append((row["id"], row["vector"]))
    assert set(store.categories()) == set(by_category)
    for category, members in by_category.items():
        stored = store.category_bundle(category)
        assert stored is not None
        vector_sum, associations, count = stored
        assert count == len(members)
        vectors = [hrr.decode_phases(blob) for _, blob in members]
        assert np.allclose(vector_sum, hrr.superpose(vectors), atol=1e-9)
        expected = hrr.empty_superposition(store.dimension)
        for (fact_id, _), vector in zip(members, vectors, strict=True):
            fact = store.get(fact_id)
            assert fact is not None
            for entity in fact.entities:
                expected = hrr.add_to(
                    expected, hrr.bind(entity_atom(entity, store.dimension), vector)
                )
        assert np.allclose(associations, expected, atol=1e-9)


def test_add_indexes_links_and_bundles(store: FactStore) -> None:
    result = store.add("Alice moved to Lisbon in 2021", category="People")
    assert result.created
    fact = result.fact
    assert fact.category == "people"
    assert fact.trust == pytest.approx(0.5)
    assert set(fact.entities) == {"alice", "lisbon"}
    assert fts_ids(store, "lisbon") == {fact.id}
    assert fts_ids(store, "people") == {fact.id}  # the category is indexed too
    assert store.categories() == {"people": 1}
    assert_in_sync(store)


def test_explicit_entities_are_linked_and_kept(store: FactStore) -> None:
    fact = store.add("the deploy script needs sudo", entities=["deploy.sh", "Ops Team"]).fact
    assert fact.entities[:2] == ("deploy.sh", "ops team")
    updated = store.update(fact.id, content="the deploy script no longer needs sudo")
    assert {"deploy.sh", "ops team"} <= set(updated.entities)


def test_duplicate_raises_trust_instead_of_adding(store: FactStore) -> None:
    first = store.add("Bob prefers tea.").fact
    again = store.add("  bob PREFERS tea ", entities=["Kitchen"])
    assert not again.created
    assert again.fact.id == first.id
    assert again.fact.trust == pytest.approx(0.55)
    assert "kitchen" in again.fact.entities  # the duplicate's new entity was merged
    assert store.count() == 1
    assert store.categories() == {"general": 1}
    assert_in_sync(store)


def test_update_content_and_category_moves_index_and_bundles(store: FactStore) -> None:
    keep = store.add("Carol works at Initech", category="work").fact
    fact = store.add("Dave uses Emacs", category="tools").fact
    updated = store.update(fact.id, content="Dave switched to Helix", category="work")
    assert updated.content == "Dave switched to Helix"
    assert updated.category == "work"
    assert set(updated.entities) == {"dave", "helix"}
    assert fts_ids(store, "emacs") == set()
    assert fts_ids(store, "helix") == {fact.id}
    assert store.categories() == {"work": 2}  # the emptied category's bundle is gone
    assert store.read("SELECT name FROM entities WHERE name = 'emacs'") == []
    assert keep.id in fts_ids(store, "initech")
    assert_in_sync(store)


def test_update_refuses_a_duplicate_and_unknown_ids(store: FactStore) -> None:
    a = store.add("Erin lives in Oslo").fact
    b = store.add("Erin lives in Bergen").fact
    with pytest.raises(ValueError, match=f"#{a.id} already says this"):
        store.update(b.id, content="erin lives in oslo.")
    with pytest.raises(ValueError, match="no fact #999"):
        store.update(999, content="x")
    with pytest.raises(ValueError, match="needs content"):
        store.update(a.id)
    assert store.get(b.id).content == "Erin lives in Bergen"  # rolled back
    assert_in_sync(store)


def test_remove_cleans_index_links_and_bundle(store: FactStore) -> None:
    a = store.add("Frank owns a Corgi named Biscuit", category="pets").fact
    b = store.add("Frank's sister lives in Rome", category="people").fact
    removed = store.remove(a.id)
    assert removed.content == a.content
    assert store.get(a.id) is None
    assert fts_ids(store, "biscuit") == set()
    assert store.categories() == {"people": 1}
    assert store.read("SELECT name FROM entities WHERE name = 'biscuit'") == []
    assert store.read("SELECT name FROM entities WHERE name = 'frank'")  # still used by b
    assert store.read("SELECT COUNT(*) FROM fact_entities WHERE fact_id = ?", (a.id,))[0][0] == 0
    with pytest.raises(ValueError, match="no fact"):
        store.remove(a.id)
    assert store.get(b.id) is not None
    assert_in_sync(store)


def test_add_many_is_one_transaction(store: FactStore) -> None:
    results = store.add_many(
        [NewFact("Gina plays cello", "music"), NewFact("Gina plays cello."), NewFact("Hal sings")]
    )
    assert [r.created for r in results] == [True, False, True]
    with pytest.raises(ValueError, match="empty"):
        store.add_many([NewFact("Ivan paints"), NewFact("   ")])
    assert store.count() == 2  # the failed batch left nothing behind
    assert_in_sync(store)


@pytest.mark.parametrize(
    ("content", "message"),
    [("", "empty"), ("   \n", "empty"), (42, "string"), ("x" * 1001, "at most 1000")],
)
def test_bad_content_is_refused(store: FactStore, content: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        store.add(content)  # type: ignore[arg-type]


def test_feedback_moves_trust_within_bounds(store: FactStore) -> None:
    fact = store.add("Jane's birthday is 12 March").fact
    up = store.feedback(fact.id, True)
    assert up.trust == pytest.approx(0.6)
    assert up.helpful_count == 1
    assert up.last_used_at is not None
    for _ in range(10):
        up = store.feedback(fact.id, True)
    assert up.trust == 1.0
    for _ in range(10):
        down = store.feedback(fact.id, False)
    assert down.trust == 0.0
    assert (down.helpful_count, down.unhelpful_count) == (11, 10)
    with pytest.raises(ValueError, match="true or false"):
        store.feedback(fact.id, "yes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="no fact"):
        store.feedback(12345, True)


def test_reopen_at_a_new_dimension_re_encodes(tmp_path: Path) -> None:
    path = tmp_path / "facts.db"
    with FactStore(path, dimension=256) as small:
        small.add("Kim maintains the billing service", category="work")
        small.add("Kim prefers dark mode", category="preferences")
    with FactStore(path, dimension=512) as large:
        assert large.dimension == 512
        assert {len(row[0]) for row in large.read("SELECT vector FROM facts")} == {1024}
        assert large.read("SELECT value FROM meta WHERE key = 'dimension'")[0][0] == "512"
        assert_in_sync(large)
        assert large.search("billing")[0].fact.content == "Kim maintains the billing service"
        version = large.read("SELECT MAX(version) FROM schema_version")[0][0]
        assert version == LATEST_VERSION
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA page_size").fetchone()[0] == 8192
    finally:
        conn.close()


def test_closed_store_refuses_work(tmp_path: Path) -> None:
    store = FactStore(tmp_path / "f.db", dimension=64)
    store.close()
    with pytest.raises(RuntimeError, match="closed"):
        store.add("anything")


def test_importing_the_package_does_not_load_numpy() -> None:
    code = "import sys, herald.memory.holographic; print('numpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
