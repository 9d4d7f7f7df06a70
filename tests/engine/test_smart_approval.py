"""Smart approvals: the auxiliary model (the fake server) reviews a flagged command
before any human is asked."""

from __future__ import annotations

import pytest

from herald.engine import ExitReason, Humans
from herald.testing.fake_llm import FakeUsage, Reply

FLAGGED_BUT_HARMLESS = "python3 -c 'print(6*7)'"  # inline interpreter code needs approval


def is_judge(req) -> bool:
    return any("You review shell commands" in (m.get("content") or "") for m in req.messages)


# The judge answers for a human who is there (APPROVE spares them the question); with
# nobody there the unattended allowlist decides and no judge is asked — except under the
# dangerous `unattended: allow` opt-out, where a judge's DENY still denies.
@pytest.mark.parametrize(
    ("verdict", "ran", "attended"),
    [("APPROVE\nroutine arithmetic", True, True), ("DENY\nno", False, False)],
)
def test_the_judge_decides_before_a_human(make_agent, fake_llm, verdict, ran, attended):
    def handler(req):
        if is_judge(req):
            return Reply.text(verdict)
        if req.messages[-1]["role"] == "user":
            return Reply.tool_call("terminal", {"command": FLAGGED_BUT_HARMLESS})
        return Reply.text("finished")

    fake_llm.set_handler(handler)
    asked: list[str] = []
    if attended:
        agent = make_agent(config={"approvals": {"mode": "smart"}})
        humans = Humans(approve=lambda prompt: asked.append(prompt.text()) or "deny")
    else:
        opt_out = {"approvals": {"mode": "smart", "unattended": {"cli": "allow"}}}
        agent, humans = make_agent(config=opt_out), None
    result = agent.start_turn("compute it", humans=humans).result(timeout=60)
    assert result.exit_reason is ExitReason.TEXT_RESPONSE
    assert asked == []  # the judge answered; nobody was asked
    judged = [r for r in fake_llm.model_requests() if is_judge(r)]
    assert len(judged) == 1
    assert "UNTRUSTED-COMMAND" in judged[0].messages[-1]["content"]
    tool_result = next(m for m in fake_llm.model_requests()[-1].messages if m["role"] == "tool")
    assert ("42" in tool_result["content"]) is ran


def test_manual_mode_never_consults_the_judge(make_agent, fake_llm):
    fake_llm.set_handler(
        lambda req: (
            Reply.tool_call("terminal", {"command": FLAGGED_BUT_HARMLESS})
            if req.messages[-1]["role"] == "user"
            else Reply.text("finished")
        )
    )
    agent = make_agent()  # manual, and no human attached: unattended default denies
    agent.run_turn("compute it")
    assert not any(is_judge(r) for r in fake_llm.model_requests())
    tool_result = next(m for m in fake_llm.model_requests()[-1].messages if m["role"] == "tool")
    assert "42" not in tool_result["content"]


# Output costs $1000 per million tokens, input nothing: a turn's call reporting 1000
# output tokens costs $1; the judge's estimate (300 tokens out) is $0.30.
PRICED = {
    "approvals": {"mode": "smart"},
    "model": {"pricing": {"input_per_mtok": 0, "output_per_mtok": 1000}},
    "budget": {"output_estimate_tokens": 10, "daily_usd": 1.2},
}
FREE = FakeUsage(prompt_tokens=10, completion_tokens=0)


def compute_then_finish(verdict: str = "APPROVE\nfine"):
    def handler(req):
        if is_judge(req):
            return Reply.text(verdict, usage=FakeUsage(prompt_tokens=10, completion_tokens=50))
        if req.messages[-1]["role"] == "user" and req.messages[-1]["content"] == "compute it":
            return Reply.tool_call("terminal", {"command": FLAGGED_BUT_HARMLESS}, usage=FREE)
        if req.messages[-1]["role"] == "user":
            return Reply.text("warm-up", usage=FakeUsage(prompt_tokens=10, completion_tokens=1000))
        return Reply.text("finished", usage=FREE)

    return handler


def test_the_judges_usage_is_recorded_as_a_side_job(make_agent, fake_llm):
    fake_llm.set_handler(compute_then_finish())
    agent = make_agent(config={**PRICED, "budget": {}})
    attended = Humans(approve=lambda prompt: "deny")  # the judge answers for a human
    result = agent.start_turn("compute it", humans=attended).result(timeout=60)
    kinds = [u.kind for u in agent.store.list_usage(result.session_id)]
    assert "judge" in kinds
    judge = next(u for u in agent.store.list_usage(result.session_id) if u.kind == "judge")
    assert judge.cost_usd == pytest.approx(0.05)  # 50 output tokens at $1000/M


def test_past_a_cap_the_judge_is_not_asked_and_the_human_is(make_agent, fake_llm):
    fake_llm.set_handler(compute_then_finish())
    agent = make_agent(config=PRICED)
    agent.run_turn("warm up")  # $1 of the $1.20 cap spent
    asked = []

    def approve(prompt):
        asked.append(prompt.text())
        return "once"

    result = agent.start_turn("compute it", humans=Humans(approve=approve)).result(timeout=60)
    assert result.exit_reason is ExitReason.TEXT_RESPONSE
    assert not any(is_judge(r) for r in fake_llm.model_requests())
    assert len(asked) == 1 and "the reviewer was not asked" in asked[0]
    assert "budget.daily_usd" in asked[0]
    tool_result = next(m for m in fake_llm.model_requests()[-1].messages if m["role"] == "tool")
    assert "42" in tool_result["content"]  # the human allowed it


def test_past_a_cap_an_unattended_turn_denies_without_the_judge(make_agent, fake_llm):
    fake_llm.set_handler(compute_then_finish())
    agent = make_agent(config=PRICED)
    agent.run_turn("warm up")
    agent.run_turn("compute it")
    assert not any(is_judge(r) for r in fake_llm.model_requests())
    tool_result = next(m for m in fake_llm.model_requests()[-1].messages if m["role"] == "tool")
    assert "42" not in tool_result["content"]
