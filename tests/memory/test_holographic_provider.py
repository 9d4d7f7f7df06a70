"""HolographicProvider: initialize in a home, the fact_store tool round trip,
prefetch lines, and clear errors for bad arguments."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from herald.config import HeraldHome
from herald.memory import semantic
from herald.memory.holographic import FACT_STORE_SCHEMA, HolographicProvider
from herald.memory.holographic.provider import PREFETCH_MIN_RELEVANCE
from herald.memory.provider import MemoryProvider


@pytest.fixture
def provider(tmp_path: Path):
    home = HeraldHome(tmp_path / "home").ensure()
    opened = HolographicProvider(dimension=256)
    opened.initialize(home=home, config=SimpleNamespace(), secrets=None)
    yield opened
    opened.shutdown()


def call(provider: HolographicProvider, **arguments) -> dict:
    return json.loads(provider.handle_tool_call("fact_store", arguments))


def test_defaults_open_the_store_in_the_home(provider: HolographicProvider, tmp_path: Path):
    assert isinstance(provider, MemoryProvider)
    assert provider.name == "holographic"
    assert provider.store.path == tmp_path / "home" / "memories" / "facts.db"
    assert provider.store.path.exists()
    assert provider.backup_paths() == [provider.store.path]
    assert provider.settings["min_trust"] == 0.2
    assert provider.settings["max_results"] == 8
    assert provider.settings["decay_half_life_days"] is None


def test_a_plain_path_home_keeps_the_store_inside_it(tmp_path: Path) -> None:
    # A Path has a .root attribute too ("/"): the store must not land in the filesystem root.
    provider = HolographicProvider(db_path="facts-x.db", dimension=128)
    provider.initialize(home=tmp_path / "plain", config=None)
    try:
        assert provider.store.path == tmp_path / "plain" / "facts-x.db"
    finally:
        provider.shutdown()


def test_config_section_is_read_and_constructor_values_win(tmp_path: Path) -> None:
    home = HeraldHome(tmp_path / "home").ensure()
    section = SimpleNamespace(
        db_path="data/my-facts.db",
        dimension=128,
        min_trust=0.4,
        decay_half_life_days=90.0,
        max_results=3,
    )
    config = SimpleNamespace(memory=SimpleNamespace(holographic=section))
    provider = HolographicProvider(max_results=5)
    provider.initialize(home=home, config=config)
    try:
        store = provider.store
        assert store.path == home.root / "data" / "my-facts.db"
        assert (store.dimension, store.min_trust, store.decay_half_life_days) == (128, 0.4, 90.0)
        assert store.max_results == 5
    finally:
        provider.shutdown()


def test_reads_the_real_memory_config(tmp_path: Path) -> None:
    from herald.testing.homes import make_home

    settings = make_home(
        tmp_path / "home",
        {
            "memory": {
                "provider": "holographic",
                "holographic": {"dimension": 128, "max_results": 2},
            }
        },
    )
    provider = HolographicProvider()
    provider.initialize(home=settings.home, config=settings.config, secrets=settings.secrets)
    try:
        assert provider.store.path == settings.home.root / "memories" / "facts.db"
        assert provider.store.dimension == 128
        for text in ("Ann likes tea", "Ann likes jazz", "Ann likes chess"):
            provider.handle_tool_call("fact_store", {"action": "add", "content": text})
        assert call(provider, action="search", query="Ann likes")["count"] == 2
    finally:
        provider.shutdown()


def test_schema_and_prompt_block(provider: HolographicProvider) -> None:
    (schema,) = provider.tool_schemas()
    assert schema["name"] == "fact_store"
    assert schema["parameters"]["properties"]["action"]["enum"] == [
        "add", "search", "probe", "related", "reason", "contradict", "update", "remove",
        "feedback",
    ]  # fmt: skip
    assert len(json.dumps(schema)) < 1500  # sent with every request
    schema["name"] = "mutated"
    assert FACT_STORE_SCHEMA["name"] == "fact_store"
    block = provider.system_prompt_block()
    assert "fact_store" in block and "\n" not in block
    assert provider.sync_turn("I like tea", "Noted.") is None
    assert provider.store.count() == 0  # turns are never scraped


def test_tool_round_trip(provider: HolographicProvider) -> None:
    added = call(provider, action="add", content="Alice's favourite editor is Helix",
                 category="preferences")  # fmt: skip
    assert added["status"] == "added"
    fact_id = added["id"]
    assert "alice" in added["entities"]
    again = call(provider, action="add", content="alice's favourite editor is helix.")
    assert again["status"].startswith("already known") and again["id"] == fact_id
    assert again["trust"] == 0.55
    call(provider, action="add", content="Alice lives in Paris", category="people")
    call(provider, action="add", content="Alice lives in Berlin", category="people")

    found = call(provider, action="search", query="Alice editor")
    assert found["facts"][0]["id"] == fact_id
    assert set(found["facts"][0]) == {"id", "content", "category", "trust", "score"}
    assert provider.store.get(fact_id).last_used_at is not None

    assert call(provider, action="probe", category="people", entity="Alice")["count"] == 2
    assert call(provider, action="related", entity="alice")["count"] == 3
    assert call(provider, action="reason", entities=["Alice", "Helix"])["facts"][0]["id"] == (
        fact_id
    )
    pairs = call(provider, action="contradict")
    assert pairs["pairs"][0]["reason"] == "value"

    fed = call(provider, action="feedback", id=fact_id, helpful=True)
    assert (fed["trust"], fed["helpful_count"]) == (0.65, 1)
    updated = call(provider, action="update", id=str(fact_id), content="Alice now uses Zed")
    assert updated["content"] == "Alice now uses Zed"
    assert call(provider, action="search", query="Helix")["count"] == 0
    removed = call(provider, action="remove", id=fact_id)
    assert removed["status"] == "removed"
    assert call(provider, action="search", query="Zed", limit=2)["count"] == 0
    raw = provider.handle_tool_call("fact_store", {"action": "search", "query": "Paris"})
    assert ", " not in raw and ": " not in raw  # compact JSON


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({}, "action must be one of"),
        ({"action": "forget"}, "action must be one of"),
        ({"action": "add"}, "needs 'content'"),
        ({"action": "add", "content": "   "}, "needs 'content'"),
        ({"action": "add", "content": 5}, "must be a string"),
        ({"action": "add", "content": "x", "colour": "red"}, "no argument"),
        ({"action": "update", "content": "x"}, "needs 'id'"),
        ({"action": "update", "id": 1}, "needs 'content'"),
        ({"action": "remove", "id": "one"}, "must be an integer"),
        ({"action": "remove", "id": 404}, "no fact #404"),
        ({"action": "feedback", "id": 1}, "needs 'helpful'"),
        ({"action": "feedback", "id": 1, "helpful": "maybe"}, "true or false"),
        ({"action": "probe", "entity": "x"}, "needs 'category'"),
        ({"action": "reason"}, "needs 'entities'"),
        ({"action": "reason", "entities": [1, 2]}, "list of strings"),
        ({"action": "search", "query": "x", "limit": 0}, "between 1 and 50"),
        ({"action": "search"}, "needs 'query'"),
    ],
)
def test_bad_arguments_raise_value_errors_that_say_what_to_fix(
    provider: HolographicProvider, arguments: dict, message: str
) -> None:
    call(provider, action="add", content="Bob plays the cello")
    with pytest.raises(ValueError, match=message):
        provider.handle_tool_call("fact_store", arguments)


def test_other_tool_names_are_not_ours(provider: HolographicProvider) -> None:
    with pytest.raises(NotImplementedError):
        provider.handle_tool_call("memory", {})


def test_prefetch_lines_and_relevance_floor(provider: HolographicProvider) -> None:
    fact = call(provider, action="add", content="Carol's dog is called Pepper", category="pets")
    call(provider, action="add", content="The team standup is at 9:30 on weekdays")
    text = provider.prefetch("what's the name of Carol's dog?")
    assert text == f"- #{fact['id']} (trust 0.50) Carol's dog is called Pepper"
    assert provider.prefetch("can you refactor this function for me") == ""
    assert provider.prefetch("") == ""
    assert provider.store.get(fact["id"]).last_used_at is not None


def test_recall_is_what_the_prefetch_shows_with_its_scores(
    provider: HolographicProvider,
) -> None:
    """The LoCoMo bench merges two stores' recall by score: that list must be the
    prefetch's facts, in its order (best score first), each above the relevance floor."""
    call(provider, action="add", content="Carol's dog is called Pepper", category="pets")
    call(provider, action="add", content="Carol walks Pepper by the river", category="pets")
    call(provider, action="add", content="The team standup is at 9:30 on weekdays")
    query = "where does Carol walk her dog Pepper?"
    hits = provider.recall(query)
    shown = [int(line.split()[1][1:]) for line in provider.prefetch(query).splitlines()]
    assert [hit.fact.id for hit in hits] == shown and len(shown) == 2
    scores = [hit.score for hit in hits]
    assert scores == sorted(scores, reverse=True)
    assert min(hit.parts["relevance"] for hit in hits) >= PREFETCH_MIN_RELEVANCE
    assert provider.recall("can you refactor this function for me") == []
    assert HolographicProvider().recall("anything") == []


def test_prefetch_before_initialize_is_empty() -> None:
    assert HolographicProvider().prefetch("anything") == ""
    with pytest.raises(RuntimeError, match="initialize"):
        HolographicProvider().handle_tool_call("fact_store", {"action": "search", "query": "x"})


@pytest.mark.skipif(not semantic.available(), reason="relevance measured with the model's meanings")
def test_a_fact_that_only_shares_a_name_with_the_message_is_not_prefetched(
    provider: HolographicProvider,
) -> None:
    """The prefetch goes into every message: a fact about Carol's dog has no place in
    "book a table for Carol" (relevance 0.53 with the model, shown under the old
    floor of 0.45), while what Carol drinks still comes for "does Carol drink coffee?"."""
    dog = call(provider, action="add", content="Carol's dog is called Pepper")
    tea = call(provider, action="add", content="Carol prefers tea to coffee")
    assert dog["id"] not in [
        hit.fact.id for hit in provider.recall("can you book a table for Carol and me?")
    ]
    assert [hit.fact.id for hit in provider.recall("does Carol drink coffee?")] == [tea["id"]]
