"""Memory that belongs to someone (issue 29): USER.md per identity, the pre-identity
USER.md adopted by the owner, `session_search` scoped to the turn's identity, and an
external provider that cannot keep identities apart switched off for non-owners."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from memory_support import home_settings

from herald.config import HeraldHome
from herald.memory import BuiltinMemory, MemoryManager, MemoryProvider, MemoryProviderError
from herald.memory.holographic import HolographicProvider
from herald.memory.session_search import SessionSearch
from herald.state import StateStore


def test_each_identity_has_its_own_user_md(tmp_path: Path) -> None:
    settings = home_settings(tmp_path)
    owner = BuiltinMemory(settings.home, settings.config.memory)
    dana = BuiltinMemory(settings.home, settings.config.memory, identity="dana")
    assert dana.add("user", "Dana likes chess.").success
    assert owner.add("user", "The owner likes tea.").success
    assert owner.entries("user") == ["The owner likes tea."]
    assert dana.entries("user") == ["Dana likes chess."]
    assert settings.home.user_memory_file("dana").parent.name == "dana"
    # The agent's notes (MEMORY.md) are per identity too; the owner's stay where they were.
    assert owner.files.path("memory") == settings.home.memories_dir / "MEMORY.md"
    assert dana.files.path("memory") == settings.home.user_memory_dir("dana") / "MEMORY.md"
    assert dana.add("memory", "Dana's project is a treehouse.").success
    assert owner.entries("memory") == []


def test_an_old_homes_user_md_becomes_the_owners(tmp_path: Path) -> None:
    root = tmp_path / "home"
    (root / "memories").mkdir(parents=True)
    (root / "memories" / "USER.md").write_text("Name: Ada.\n")
    home = HeraldHome(root)
    assert BuiltinMemory(home).entries("user") == ["Name: Ada."]
    assert home.user_memory_file().read_text() == "Name: Ada.\n"
    assert not (root / "memories" / "USER.md").exists()
    assert BuiltinMemory(home, identity="dana").entries("user") == []  # not anyone else's


@pytest.mark.parametrize("bad", ["..", "../owner", "a/b", ""])
def test_an_identity_never_names_a_path_outside_users(tmp_path: Path, bad: str) -> None:
    with pytest.raises(ValueError):
        HeraldHome(tmp_path).user_memory_dir(bad)


def test_session_search_sees_only_its_identitys_sessions(tmp_path: Path) -> None:
    with StateStore(tmp_path / "state.db") as store:
        danas = store.create_session(source="telegram", identity="dana", title="dana's chat")
        store.append_message(danas, {"role": "user", "content": "my passport is K1234 lighthouse"})
        mine = store.create_session(source="cli", title="owner's chat")
        store.append_message(mine, {"role": "user", "content": "the lighthouse trip"})
        owner = SessionSearch(store, identity="owner")
        found = owner.run(query="lighthouse")
        assert [r["session_id"] for r in found["results"]] == [mine]
        assert owner.run(query="passport K1234")["results"] == []
        assert [s["session_id"] for s in owner.run()["sessions"]] == [mine]
        with pytest.raises(Exception, match="no session id starts with"):
            owner.run(session_id=danas)  # by id: as if it did not exist
        anchor = store.get_messages(danas)[0].id
        with pytest.raises(Exception, match="no session id starts with"):
            owner.run(around_message_id=anchor)
        dana = SessionSearch(store, identity="dana")
        assert [r["session_id"] for r in dana.run(query="passport")["results"]] == [danas]


class SharedOnlyProvider(MemoryProvider):
    """A provider whose initialize knows nothing of identities."""

    name = "shared-only"

    def initialize(self, *, home, config, secrets=None) -> None:  # type: ignore[override]
        self.home = home

    def prefetch(self, query: str) -> str:
        return "everyone's facts"

    def sync_turn(self, user: str, assistant: str) -> None:
        pass


def test_a_provider_that_cannot_separate_identities_is_off_for_non_owners(
    tmp_path: Path,
) -> None:
    settings = home_settings(tmp_path)
    MemoryManager(settings.home, settings.config, provider=SharedOnlyProvider())  # owner: fine
    with pytest.raises(MemoryProviderError, match="off for dana's turns"):
        MemoryManager(
            settings.home, settings.config, provider=SharedOnlyProvider(), identity="dana"
        )


def test_holographic_facts_are_per_identity(tmp_path: Path) -> None:
    settings = home_settings(tmp_path)

    def add(identity: str, text: str) -> HolographicProvider:
        provider = HolographicProvider()
        MemoryManager(settings.home, settings.config, provider=provider, identity=identity)
        provider.handle_tool_call("fact_store", {"action": "add", "content": text})
        return provider

    dana = add("dana", "Dana is allergic to peanuts")
    owner = add("owner", "The owner drinks green tea")
    assert "peanuts" in dana.prefetch("peanuts allergy")
    assert owner.prefetch("peanuts allergy") == ""
    assert json.dumps(str(dana.store.path)).count("users") == 1
