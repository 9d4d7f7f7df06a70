"""A process killed while its sub-agents run leaves the parent and every child session
resumable: each resumes with a legal transcript and answers its next turn."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading

import pytest

from herald.delegation.runner import CHILD_SYSTEM
from herald.engine import ExitReason
from herald.state import StateStore
from herald.testing.fake_llm import Reply
from herald.testing.transcript_checks import transcript_problems

PARENT = textwrap.dedent(
    """
    import sys, types
    from pathlib import Path
    from herald.engine import Agent, AgentOptions
    from herald.state import StateStore
    from herald.testing.homes import fake_model_config, make_home
    from herald.toolbox import builtin_tools

    server = types.SimpleNamespace(openai_base_url=sys.argv[2])
    settings = make_home(Path(sys.argv[1]), fake_model_config(server))
    store = StateStore(settings.home.state_db)
    agent = Agent.open(settings, store, source="cli", tools=builtin_tools(), options=AgentOptions(cwd=sys.argv[3]))
    agent.run_turn("fan out")
    print("unreachable")
    """
)


@pytest.mark.slow
def test_kill_while_children_run_then_resume_parent_and_children(tmp_path, fake_llm, make_agent):
    arrived = threading.Barrier(2, timeout=60)
    killed = threading.Event()
    process: list[subprocess.Popen] = []

    def answer(request):
        if CHILD_SYSTEM not in (request.system or ""):
            return None
        if killed.is_set():
            return Reply.text("resumed child answer")
        try:
            arrived.wait()  # both children are asking the model: kill the process now
        except threading.BrokenBarrierError:
            pass
        if not killed.is_set():
            killed.set()
            os.kill(process[0].pid, signal.SIGKILL)
        return Reply.text("never delivered")

    fake_llm.set_handler(answer)
    fake_llm.enqueue(
        Reply.tool_call("delegate_task", {"tasks": [{"goal": "one"}, {"goal": "two"}]})
    )
    home = tmp_path / "home"
    work = tmp_path / "work"
    work.mkdir()
    process.append(
        subprocess.Popen(
            [sys.executable, "-c", PARENT, str(home), fake_llm.openai_base_url, str(work)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
    )
    out, err = process[0].communicate(timeout=60)
    assert process[0].returncode == -signal.SIGKILL, err
    assert "unreachable" not in out

    with StateStore(home / "state.db") as store:
        sessions = store.list_sessions(limit=10)
    (parent,) = [s for s in sessions if s.source != "delegate"]
    children = [s for s in sessions if s.source == "delegate"]
    assert len(children) == 2 and all(c.parent_id == parent.id for c in children)

    fake_llm.enqueue(Reply.text("parent resumed"))
    resumed = make_agent(session_id=parent.id)
    assert resumed.start_turn("where were we?").result(timeout=30).final_text == "parent resumed"
    for child in children:
        agent = make_agent(session_id=child.id, source="delegate", caller_system=CHILD_SYSTEM)
        result = agent.start_turn("continue").result(timeout=30)
        assert result.exit_reason is ExitReason.TEXT_RESPONSE
        assert result.final_text == "resumed child answer"
    for request in fake_llm.model_requests()[-3:]:
        assert not transcript_problems(request.messages)
