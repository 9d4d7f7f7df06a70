"""The control plane on the attended path, with a real agent against the fake model and a
human who says yes to everything (issue 26 part A): a posture change is refused without
asking even with ``approvals.mode: off``; an admin command asks (once only); a sub-agent
of that attended parent is refused Herald's admin commands without anyone being asked."""

from __future__ import annotations

import sys

from test_delegate_task import delegate, is_child, results_of

from herald.engine import Humans
from herald.testing.fake_llm import Reply

LOOSE = {"approvals": {"mode": "off", "always_allow": ["*"]}}


def tool_results(fake_llm) -> list[str]:
    last = [r for r in fake_llm.model_requests() if not is_child(r)][-1]
    return [m["content"] for m in last.messages if m["role"] == "tool"]


def test_attended_posture_change_refused_though_the_human_says_yes(make_agent, fake_llm, tmp_path):
    asked = []

    def yes(prompt):
        asked.append(prompt)
        return "always"

    target = tmp_path / "other-home"
    admin = f"HERALD_HOME={target} {sys.executable} -m herald config set model.name other"
    fake_llm.enqueue(
        Reply.tool_call("terminal", {"command": "herald config set approvals.mode manual"}),
        Reply.tool_call("terminal", {"command": "herald web token"}),
        Reply.tool_call("terminal", {"command": admin}),
        Reply.text("done"),
    )
    agent = make_agent(config=LOOSE)
    config = agent.runtime.home.config_path
    before = config.read_bytes()
    agent.start_turn("go", humans=Humans(approve=yes)).result(timeout=120)
    posture, token, asked_admin = tool_results(fake_llm)
    assert "[control.posture_change]" in posture and "[control.token]" in token
    assert config.read_bytes() == before
    assert not (agent.runtime.home.root / "web" / "token.json").exists()
    # only the admin command reached the human, offered once/deny, and ran once
    assert [p.rule for p in asked] == ["control.admin"]
    assert asked[0].choices == ("once", "deny")
    assert "other" in (target / "config.yaml").read_text(), asked_admin


def test_a_sub_agent_of_an_attended_parent_is_refused_admin_commands_unasked(make_agent, fake_llm):
    asked = []

    def yes(prompt):
        asked.append(prompt)
        return "once"

    def child(request):
        if not is_child(request):
            return None
        done = [m for m in request.messages if m["role"] == "tool"]
        if not done:
            return Reply.tool_call(
                "terminal", {"command": "herald cron add evil --schedule 'every 1m' --prompt x"}
            )
        return Reply.text(done[-1]["content"])

    fake_llm.set_handler(child)
    fake_llm.enqueue(delegate("schedule it"), Reply.text("done"))
    agent = make_agent(config=LOOSE)
    agent.start_turn("go", humans=Humans(approve=yes)).result(timeout=120)
    (report,) = results_of(fake_llm)
    assert "sub-agent may not run Herald's admin commands" in report["final_text"]
    assert asked == []
    cron = agent.runtime.home.root / "cron"
    assert not any("evil" in p.read_text(errors="replace") for p in cron.rglob("*") if p.is_file())
