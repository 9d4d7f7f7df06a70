"""probe / related / reason / contradict on a small seeded fact set."""

from __future__ import annotations

from pathlib import Path

import pytest

from herald.memory.holographic import FactStore, hrr
from herald.memory.holographic.contradictions import compare

SEED = [
    ("Alice lives in Paris", "people"),
    ("Alice's favourite editor is Helix", "preferences"),
    ("Alice has a cat called Miso", "people"),
    ("Bob does not like coffee", "people"),
    ("Bob likes coffee", "people"),
    ("Bob plays the cello", "people"),
    ("Carol is 34 years old", "people"),
    ("Carol is 35 years old", "people"),
    ("Project Phoenix deploys to fly.io every Friday", "projects"),
    ("Alice works with Bob on Project Phoenix", "projects"),
    ("Dave reviews every Project Phoenix release", "projects"),
    ("Alice lives in Berlin", "people"),
    ("The user prefers Neovim over VS Code", "preferences"),
]


@pytest.fixture
def seeded(tmp_path: Path):
    with FactStore(tmp_path / "facts.db", dimension=1024) as store:
        ids = {content: store.add(content, category=category).fact.id for content, category in SEED}
        yield store, ids


def contents(hits) -> list[str]:
    return [hit.fact.content for hit in hits]


def test_probe_unbinds_an_entity_from_a_category(seeded) -> None:
    store, _ = seeded
    hits = store.probe("people", "Alice")
    assert set(contents(hits)[:3]) == {
        "Alice lives in Paris",
        "Alice has a cat called Miso",
        "Alice lives in Berlin",
    }
    assert all(hit.fact.category == "people" for hit in hits)
    assert "Bob likes coffee" not in contents(hits)[:3]
    # The holographic part alone separates them: Alice's facts resemble the
    # unbound vector, the others sit near zero.
    alice = [h.parts["holographic"] for h in hits if "Alice" in h.fact.content]
    others = [h.parts["holographic"] for h in hits if "Alice" not in h.fact.content]
    assert min(alice) > max(others, default=0.0)
    assert contents(store.probe("people", "cello")) == []  # no linked fact, no signal
    assert store.probe("no such category", "alice") == []
    with pytest.raises(ValueError, match="category"):
        store.probe("", "alice")


def test_probe_past_bundle_capacity_answers_from_links(tmp_path: Path) -> None:
    with FactStore(tmp_path / "small.db", dimension=64) as store:
        capacity = hrr.bundle_capacity(64)
        for i in range(capacity + 5):
            store.add(f"Person{i} lives in City{i}", category="people")
        alice = {store.add(t, category="people").fact.id for t in ("Alice sings", "Alice rows")}
        hits = store.probe("people", "alice")
        assert {hit.fact.id for hit in hits} == alice
        assert all(hit.parts["linked"] == 1.0 and hit.parts["relevance"] == 1.0 for hit in hits)


def test_related_follows_shared_entities(seeded) -> None:
    store, _ = seeded
    hits = store.related("Bob")
    names = contents(hits)
    direct = {
        "Bob does not like coffee",
        "Bob likes coffee",
        "Bob plays the cello",
        "Alice works with Bob on Project Phoenix",
    }
    assert set(names[:4]) == direct
    # Through "project phoenix" and "alice", the co-entities of Bob's facts.
    assert "Dave reviews every Project Phoenix release" in names
    assert all(hit.parts["direct"] == 0.0 for hit in hits[4:])
    assert store.related("nobody-at-all") == []


def test_reason_prefers_facts_connecting_all_entities(seeded) -> None:
    store, _ = seeded
    hits = store.reason(["Alice", "Bob", "Project Phoenix"])
    assert contents(hits)[0] == "Alice works with Bob on Project Phoenix"
    assert hits[0].parts["coverage"] == 1.0
    assert all(hit.parts["coverage"] >= 2 / 3 for hit in hits)  # a strict majority
    # When nothing connects both, the best-connected facts still answer.
    lone = store.reason(["Carol", "Neovim"])
    assert lone and all(hit.parts["coverage"] == 0.5 for hit in lone)
    with pytest.raises(ValueError, match="entities"):
        store.reason([])


def test_contradict_lists_likely_conflicts(seeded) -> None:
    store, ids = seeded
    pairs = store.contradict(limit=10)
    found = {(p.first.content, p.second.content): p.reason for p in pairs}
    assert found[("Bob does not like coffee", "Bob likes coffee")] == "negation"
    assert found[("Carol is 34 years old", "Carol is 35 years old")] == "number"
    assert found[("Alice lives in Paris", "Alice lives in Berlin")] == "value"
    assert ("Alice lives in Paris", "Alice has a cat called Miso") not in found
    assert pairs[0].reason == "negation"
    only_carol = store.contradict(entity="carol")
    assert [p.reason for p in only_carol] == ["number"]
    about_one = store.contradict(fact_id=ids["Alice lives in Paris"])
    assert [(p.first.content, p.second.content) for p in about_one] == [
        ("Alice lives in Paris", "Alice lives in Berlin")
    ]
    with pytest.raises(ValueError, match="no fact"):
        store.contradict(fact_id=9999)


@pytest.mark.parametrize(
    ("first", "second", "reason"),
    [
        ("The API is rate limited", "The API is not rate limited", "negation"),
        ("Eve no longer uses Windows", "Eve uses Windows", "negation"),
        ("The build takes 12 minutes", "The build takes 40 minutes", "number"),
        ("Frank's car is red", "Frank's car is blue", "value"),
        ("Frank's car is red", "Gina enjoys long walks on the beach", None),
        ("Frank's car is red", "Frank's car is red and fast", None),
    ],
)
def test_contradiction_heuristic(first: str, second: str, reason: str | None) -> None:
    verdict = compare(first, second)
    assert (verdict[0] if verdict else None) == reason


def test_structured_recall_without_numpy_matches(seeded) -> None:
    store, _ = seeded
    calls = [
        lambda: store.probe("people", "Alice"),
        lambda: store.related("Bob"),
        lambda: store.reason(["Alice", "Bob", "Project Phoenix"]),
    ]
    with_numpy = [[hit.fact.id for hit in call()] for call in calls]
    with hrr.pure_python():
        without = [[hit.fact.id for hit in call()] for call in calls]
        pairs = [(p.first.id, p.second.id) for p in store.contradict()]
    assert without == with_numpy
    assert pairs == [(p.first.id, p.second.id) for p in store.contradict()]
