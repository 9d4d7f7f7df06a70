"""When the background review runs, and how its changes are described."""

from __future__ import annotations

import json

import pytest

from herald.engine import ExitReason
from herald.engine.budget import IterationBudget
from herald.engine.review import describe_changes, plan_review
from herald.engine.turn_state import TurnState
from herald.testing.fake_llm import Reply

LEARNING = {"learning": {"enabled": True, "memory_every_user_turns": 3, "skill_min_tool_iterations": 2}}


def turn(tool_iterations: int = 0, reason: ExitReason = ExitReason.TEXT_RESPONSE) -> TurnState:
    state = TurnState(budget=IterationBudget(5), tool_iterations=tool_iterations)
    state.exit_reason = reason
    return state


@pytest.fixture
def agent(make_agent, fake_llm):
    fake_llm.default_reply = Reply.text("ok")
    return make_agent(config=LEARNING)


def test_memory_review_every_n_user_turns(agent):
    plans = [plan_review(agent, turn(), "a plain question") for _ in range(6)]
    assert [p is not None and p.memory for p in plans] == [False, False, True, False, False, True]


def test_busy_turn_earns_a_skill_review(agent):
    plan = plan_review(agent, turn(tool_iterations=2), "deploy it")
    assert plan is not None and plan.skills and not plan.memory


@pytest.mark.parametrize(
    "text", ["Stop doing that, it's too verbose", "don't use tabs", "That's wrong, I told you to use uv"]
)
def test_a_correction_triggers_both(agent, text):
    plan = plan_review(agent, turn(), text)
    assert plan is not None and plan.memory and plan.skills and plan.correction


def test_no_review_after_a_failed_or_interrupted_turn_or_when_disabled(agent, make_agent):
    assert plan_review(agent, turn(reason=ExitReason.INTERRUPTED_BY_USER), "stop doing that") is None
    off = make_agent(config={"learning": {"enabled": False}})
    assert plan_review(off, turn(tool_iterations=50), "stop doing that") is None


def test_describe_changes_counts_only_successes():
    def call(cid, tool, **args):
        return {"id": cid, "type": "function", "function": {"name": tool, "arguments": json.dumps(args)}}

    messages = [
        {"role": "assistant", "content": None, "tool_calls": [
            call("a", "memory", action="add", target="user", content="likes tea"),
            call("b", "memory", action="add", target="user", content="x"),
            call("c", "skill_manage", action="create", name="deploy-staging"),
            call("d", "skill_manage", action="patch", name="git-hygiene"),
            call("e", "skills_list"),
        ]},
        {"role": "tool", "tool_call_id": "a", "content": "saved"},
        {"role": "tool", "tool_call_id": "b", "content": "[TOOL_ERROR] over the limit"},
        {"role": "tool", "tool_call_id": "c", "content": "created"},
        {"role": "tool", "tool_call_id": "d", "content": "patched"},
        {"role": "tool", "tool_call_id": "e", "content": "[]"},
    ]
    assert describe_changes(messages) == (
        "saved 1 memory, created skill deploy-staging, updated skill git-hygiene"
    )
    assert describe_changes([]) == ""
