"""Smart approvals: the auxiliary model (the fake server) reviews a flagged command
before any human is asked."""

from __future__ import annotations

import pytest

from herald.engine import ExitReason
from herald.testing.fake_llm import Reply

FLAGGED_BUT_HARMLESS = "python3 -c 'print(6*7)'"  # inline interpreter code needs approval


def is_judge(req) -> bool:
    return any("You review shell commands" in (m.get("content") or "") for m in req.messages)


@pytest.mark.parametrize(("verdict", "ran"), [("APPROVE\nroutine arithmetic", True), ("DENY\nno", False)])
def test_the_judge_decides_before_a_human(make_agent, fake_llm, verdict, ran):
    def handler(req):
        if is_judge(req):
            return Reply.text(verdict)
        if req.messages[-1]["role"] == "user":
            return Reply.tool_call("terminal", {"command": FLAGGED_BUT_HARMLESS})
        return Reply.text("finished")

    fake_llm.set_handler(handler)
    agent = make_agent(config={"approvals": {"mode": "smart"}})
    result = agent.run_turn("compute it")
    assert result.exit_reason is ExitReason.TEXT_RESPONSE
    judged = [r for r in fake_llm.model_requests() if is_judge(r)]
    assert len(judged) == 1
    assert "UNTRUSTED-COMMAND" in judged[0].messages[-1]["content"]
    tool_result = next(m for m in fake_llm.model_requests()[-1].messages if m["role"] == "tool")
    assert ("42" in tool_result["content"]) is ran


def test_manual_mode_never_consults_the_judge(make_agent, fake_llm):
    fake_llm.set_handler(
        lambda req: Reply.tool_call("terminal", {"command": FLAGGED_BUT_HARMLESS})
        if req.messages[-1]["role"] == "user"
        else Reply.text("finished")
    )
    agent = make_agent()  # manual, and no human attached: unattended default denies
    agent.run_turn("compute it")
    assert not any(is_judge(r) for r in fake_llm.model_requests())
    tool_result = next(m for m in fake_llm.model_requests()[-1].messages if m["role"] == "tool")
    assert "42" not in tool_result["content"]
