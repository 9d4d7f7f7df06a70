"""Per-agent tools live on that agent's overlay: a memory provider configured in one
profile is never offered to an agent of another profile in the same process."""

from __future__ import annotations

from pathlib import Path

from herald.engine import Agent, AgentOptions
from herald.state import StateStore
from herald.testing.fake_llm import Reply
from herald.testing.homes import fake_model_config, make_home, merge
from herald.toolbox import builtin_tools

SHARED = builtin_tools()  # one registry both profiles' agents use, as a gateway's do


def _agent(tmp_path: Path, fake_llm, name: str, extra: dict) -> Agent:
    settings = make_home(tmp_path / name, merge(fake_model_config(fake_llm, "openai"), extra))
    store = StateStore(settings.home.state_db)
    work = tmp_path / f"{name}-work"
    work.mkdir()
    return Agent.open(
        settings, store, source="cli", tools=SHARED, options=AgentOptions(cwd=str(work))
    )


def test_profile_a_is_never_offered_profile_b_provider_tool(tmp_path, fake_llm):
    fake_llm.default_reply = Reply.text("ok")
    with_provider = _agent(tmp_path, fake_llm, "b", {"memory": {"provider": "holographic"}})
    plain = _agent(tmp_path, fake_llm, "a", {})
    try:
        assert "fact_store" in with_provider.enabled_tools
        assert "fact_store" not in plain.enabled_tools
        assert SHARED.get("fact_store") is None  # never on the shared registry
        plain.run_turn("hello")
        offered = [t["function"]["name"] for t in fake_llm.model_requests()[-1].tools or []]
        assert offered and "fact_store" not in offered
    finally:
        with_provider.close()
        plain.close()
