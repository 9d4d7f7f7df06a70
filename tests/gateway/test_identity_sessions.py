"""A gateway agent never resumes another identity's session, and carries its identity
into the session it creates (issue 29)."""

from __future__ import annotations

from pathlib import Path

from herald.config.schema_identities import identity_named
from herald.gateway.sessions import build_agent
from herald.state import StateStore
from herald.testing.fake_llm import FakeLLMServer
from herald.testing.homes import fake_model_config, make_home


def test_a_key_pointing_at_another_identitys_session_starts_a_new_one(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    settings = make_home(tmp_path / "home", fake_model_config(fake_llm))
    with StateStore(settings.home.state_db) as store:
        owners = store.create_session(source="telegram", title="the owner's chat")
        dana = identity_named({}, "dana")  # unknown to the config: a guest named dana

        def agent_for(session_id: str | None, identity=dana):  # type: ignore[no-untyped-def]
            return build_agent(
                settings,
                store,
                session_id=session_id,
                platform="telegram",
                toolset="herald-cli",
                cwd=str(tmp_path),
                first_text="hello",
                identity=identity,
            )

        agent = agent_for(owners)
        try:
            assert agent.session_id != owners
            assert store.get_session(agent.session_id).identity == "dana"  # type: ignore[union-attr]
        finally:
            agent.close()
        same = agent_for(owners, identity_named({}, "owner"))
        try:
            assert same.session_id == owners  # its own identity resumes it
        finally:
            same.close()
