"""The learning loop end to end, driven by the fake LLM server: a user correction in
session 1 makes the background reviewer write a skill (and a memory); session 2's
system prompt lists the skill and the model is sent it."""

from __future__ import annotations

import pytest

from herald.engine.review import REVIEW_MARK
from herald.testing.fake_llm import Reply, ToolCallSpec

SKILL = """---
name: terse-answers
description: Answer briefly; the user dislikes verbose replies
version: 1.0.0
---
# Terse answers

- Lead with the answer in one or two sentences.
- No preamble, no recap of the question.
"""

LEARNING_ON = {"learning": {"enabled": True, "memory_every_user_turns": 50}}


def is_review(req) -> bool:
    return any(REVIEW_MARK in (m.get("content") or "") for m in req.messages if m["role"] == "user")


def reviewer_script(memory_tool_available: bool):
    calls = [
        ToolCallSpec(
            "skill_manage", {"action": "create", "name": "terse-answers", "content": SKILL}
        )
    ]
    if memory_tool_available:
        calls.append(
            ToolCallSpec(
                "memory",
                {"action": "add", "target": "user", "content": "Prefers short, direct answers."},
            )
        )

    def handler(req):
        if is_review(req):
            if req.messages[-1]["role"] == "user":
                return Reply.tool_calls(calls)
            return Reply.text("Created skill terse-answers.")
        return Reply.text("Here is a long and winding answer about your question.")

    return handler


def test_correction_becomes_a_skill_that_the_next_session_sees(make_agent, fake_llm):
    from herald.toolbox import default_registry

    registry = default_registry()

    has_memory = registry.get("memory") is not None
    fake_llm.set_handler(reviewer_script(has_memory))
    notices: list[str] = []
    agent = make_agent(config=LEARNING_ON)
    agent.callbacks.on_learning = notices.append
    first = agent.run_turn("Stop doing that, your answers are too verbose.")
    assert first.completed
    agent.review_thread.join(timeout=30)
    assert not agent.review_thread.is_alive()

    # The reviewer wrote into the home, not into the user's session.
    skill_file = agent.home.skills_dir / "terse-answers" / "SKILL.md"
    assert skill_file.exists() and "created_by: agent" in skill_file.read_text()
    rows = agent.store.get_messages(first.session_id)
    assert [m.role for m in rows] == ["user", "assistant"]
    assert "created skill terse-answers" in notices[0]
    if has_memory:
        assert "Prefers short, direct answers." in (agent.home.user_memory_file()).read_text()
        assert "saved 1 memory" in notices[0]

    # The review ran in its own child session, with its own usage.
    reviews = [s for s in agent.store.list_sessions() if s.source == "review"]
    assert len(reviews) == 1 and reviews[0].parent_id == first.session_id
    assert reviews[0].api_calls == 2 and agent.store.get_session(first.session_id).api_calls == 1

    # Session 2: the index lists the skill, and the model is sent it.
    fake_llm.reset()
    fake_llm.default_reply = Reply.text("ok")
    second = make_agent(config={"learning": {"enabled": False}})
    second.run_turn("What is 2 + 2?")
    system = fake_llm.model_requests()[0].system
    assert "terse-answers — Answer briefly; the user dislikes verbose replies" in system
    assert system.index("terse-answers") < system.index("## Environment")


def test_the_index_is_frozen_mid_session(make_agent, fake_llm):
    """A skill created during a session reaches the model only in the next session."""
    fake_llm.enqueue(
        Reply.tool_call(
            "skill_manage", {"action": "create", "name": "terse-answers", "content": SKILL}
        ),
        Reply.text("saved"),
        Reply.text("again"),
    )
    agent = make_agent()
    agent.run_turn("remember how I like answers")
    agent.run_turn("and now?")
    prompts = {r.system for r in fake_llm.model_requests()}
    assert len(prompts) == 1 and "terse-answers" not in prompts.pop()


@pytest.mark.parametrize("text", ["hello", "thanks!"])
def test_no_review_without_a_reason(make_agent, fake_llm, text):
    fake_llm.default_reply = Reply.text("hi")
    agent = make_agent(config=LEARNING_ON)
    agent.run_turn(text)
    assert agent.review_thread is None
    assert not any(is_review(r) for r in fake_llm.model_requests())
