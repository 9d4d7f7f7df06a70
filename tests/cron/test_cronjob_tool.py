"""The `cronjob` tool, called by the model through a real turn: it stores the job and says
plainly whether a scheduler is running for this home (and how to start one)."""

from __future__ import annotations

import json
import signal
import subprocess
import time

import pytest
from cron_support import herald_cmd, herald_env

from herald.cron.store import CronStore
from herald.testing.fake_llm import Reply


def tool_answer(fake_llm) -> dict:
    request = fake_llm.model_requests()[-1]
    (message,) = [m for m in request.messages if m.get("role") == "tool"][-1:]
    return json.loads(message["content"])


@pytest.mark.slow
def test_the_answer_says_whether_a_scheduler_runs_for_this_home(make_agent, fake_llm) -> None:
    agent = make_agent()
    agent.tool_context.approve = lambda prompt: "once"  # the owner approves the new job
    fake_llm.enqueue(
        Reply.tool_call("cronjob", {"action": "create", "name": "stretch",
                                    "schedule": "in 2h", "prompt": "remind me to stretch"}),
        Reply.text("Stored."),
    )  # fmt: skip
    agent.run_turn("remind me to stretch in two hours")
    answer = tool_answer(fake_llm)
    assert answer["ok"] and answer["job"]["name"] == "stretch"
    assert answer["scheduler"]["running"] is False
    assert "will NOT run until a scheduler starts" in answer["message"]
    assert "herald gateway run" in answer["scheduler"]["message"]
    assert "herald cron daemon" in answer["scheduler"]["message"]

    home = agent.home.root
    daemon = subprocess.Popen(
        herald_cmd("cron", "daemon", "--interval", "0.5"), env=herald_env(home),
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        with CronStore.for_home(agent.home) as store:
            deadline = time.monotonic() + 30
            while not store.schedulers() and time.monotonic() < deadline:
                time.sleep(0.1)
            assert [b.kind for b in store.schedulers()] == ["daemon"]
        fake_llm.enqueue(Reply.tool_call("cronjob", {"action": "list"}), Reply.text("Listed."))
        agent.run_turn("which jobs do I have?")
        answer = tool_answer(fake_llm)
        assert [j["name"] for j in answer["jobs"]] == ["stretch"]
        assert answer["scheduler"]["running"] is True
        assert f"daemon (pid {daemon.pid})" in answer["scheduler"]["message"]
    finally:
        daemon.send_signal(signal.SIGTERM)
        assert daemon.wait(30) == 0
    with CronStore.for_home(agent.home) as store:
        assert store.schedulers() == []  # a clean stop removes the heartbeat


def test_bad_input_comes_back_as_a_clear_error(make_agent, fake_llm) -> None:
    agent = make_agent()
    fake_llm.enqueue(
        Reply.tool_call("cronjob", {"action": "create", "name": "x", "schedule": "yesterday",
                                    "prompt": "p"}),
        Reply.text("Sorry."),
    )  # fmt: skip
    agent.run_turn("schedule it")
    answer = tool_answer(fake_llm)
    assert answer["ok"] is False and "cannot read the schedule" in answer["error"]
    assert "scheduler" in answer


def test_a_cron_run_cannot_create_jobs() -> None:
    from herald.toolbox import default_registry
    from herald.tools import resolve_toolset

    registry = default_registry()
    assert "cronjob" in resolve_toolset(["herald-cli"], registry)
    assert "cronjob" not in resolve_toolset(["herald-cron"], registry)
