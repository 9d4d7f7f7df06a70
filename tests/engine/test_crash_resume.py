"""A process killed between persisting a tool call and running the tool loses no
acknowledged message, and the resumed session is legal to send (invariants 3, 5)."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap

from herald.engine import INTERRUPTED_RESULT, ExitReason
from herald.state import StateStore
from herald.testing.fake_llm import Reply, ToolCallSpec
from herald.testing.transcript_checks import transcript_problems

CHILD = textwrap.dedent(
    """
    import os, signal, sys, types
    from pathlib import Path
    from herald.engine import Agent, AgentOptions
    from herald.state import StateStore
    from herald.testing.homes import fake_model_config, make_home
    from herald.toolbox import builtin_tools

    server = types.SimpleNamespace(openai_base_url=sys.argv[2])
    settings = make_home(Path(sys.argv[1]), fake_model_config(server))
    registry = builtin_tools()
    registry.register(
        "deploy", "test", {"description": "deploys", "parameters": {"type": "object"}},
        lambda args, ctx: os.kill(os.getpid(), signal.SIGKILL),
    )
    store = StateStore(settings.home.state_db)
    agent = Agent.open(settings, store, source="cli", tools=registry, options=AgentOptions(enabled_tools=("todo", "deploy")))
    agent.run_turn("deploy the site")
    print("unreachable")
    """
)


def test_kill_between_tool_call_and_tool_then_resume(tmp_path, fake_llm, make_agent):
    fake_llm.enqueue(
        Reply.tool_calls(
            [
                ToolCallSpec(
                    "todo",
                    {"todos": [{"id": "1", "content": "deploy", "status": "pending"}]},
                    id="call_todo",
                ),
                ToolCallSpec("deploy", {}, id="call_deploy"),
            ]
        )
    )
    home = tmp_path / "home"
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(home), fake_llm.openai_base_url],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert "unreachable" not in proc.stdout

    with StateStore(home / "state.db") as store:
        (session,) = store.list_sessions()
        rows = store.get_messages(session.id)
    # Acknowledged before the kill: the user message, the assistant's calls, the first result.
    assert [m.role for m in rows] == ["user", "assistant", "tool"]
    assert [c["id"] for c in rows[1].tool_calls] == ["call_todo", "call_deploy"]

    fake_llm.enqueue(Reply.text("The deploy was interrupted; shall I retry?"))
    agent = make_agent(session_id=session.id)
    result = agent.run_turn("what happened?")
    assert result.exit_reason is ExitReason.TEXT_RESPONSE
    sent = fake_llm.model_requests()[-1].messages
    assert not transcript_problems(sent)
    deploy_results = [m for m in sent if m.get("tool_call_id") == "call_deploy"]
    assert [m["content"] for m in deploy_results] == [INTERRUPTED_RESULT]
    stored = agent.store.get_messages(session.id)
    assert [m.role for m in stored] == ["user", "assistant", "tool", "tool", "user", "assistant"]
