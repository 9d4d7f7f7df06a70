"""The background reviewer runs on the auxiliary model when one is configured, its cost
is recorded as its own kind and shown apart in `/usage`, and `learning.enabled: false`
turns it off."""

from __future__ import annotations

import pytest

from herald.engine.review import REVIEW_MARK
from herald.state.reports import local_day_start, session_usage
from herald.testing.fake_llm import FakeUsage, Reply

LEARNING = {"learning": {"enabled": True, "memory_every_user_turns": 1}}
USAGE = FakeUsage(prompt_tokens=1000, completion_tokens=10)


def handler(req):
    text = " ".join(str(m.get("content") or "") for m in req.messages if m["role"] == "user")
    if REVIEW_MARK in text:
        return Reply.text("Nothing worth keeping.", usage=USAGE)
    return Reply.text("An answer.", usage=USAGE)


def test_reviewer_uses_the_auxiliary_model_and_its_cost_shows_apart(make_agent, fake_llm):
    fake_llm.set_handler(handler)
    config = {
        **LEARNING,
        "auxiliary": {
            "provider": "custom",
            "name": "fake-cheap",
            "base_url": fake_llm.openai_base_url,
            "pricing": {"input_per_mtok": 1, "output_per_mtok": 1},
        },
        "model": {"pricing": {"input_per_mtok": 10, "output_per_mtok": 10}},
    }
    agent = make_agent(config=config)
    result = agent.run_turn("Tell me something")
    agent.wait_for_background()
    models = [r.model for r in fake_llm.model_requests()]
    assert models == ["fake-gpt", "fake-cheap"]

    report = agent.store.report(session_usage, result.session_id, today=local_day_start())
    kinds = {r.key: r for r in report.by_kind}
    assert set(kinds) == {"main", "review"}
    assert kinds["main"].cost_usd == pytest.approx(10 * kinds["review"].cost_usd)
    assert kinds["review"].cost_usd > 0
    assert report.total.calls == 2
    assert any("review $" in line for line in report.lines())


def test_learning_switch_turns_the_reviewer_off(make_agent, fake_llm):
    fake_llm.set_handler(handler)
    agent = make_agent(config={"learning": {"enabled": False, "memory_every_user_turns": 1}})
    agent.run_turn("Tell me something")
    agent.wait_for_background()
    assert agent.review_thread is None
    assert len(fake_llm.model_requests()) == 1
