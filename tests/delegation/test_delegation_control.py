"""Control while children run: `/agents` lists them with status and cost, steers and
stops one; the pause switch stops new spawns; `delegate_task(action=list)` sees the same."""

from __future__ import annotations

import json
import threading

from herald.delegation import agents_command, board
from herald.delegation.runner import CHILD_SYSTEM
from herald.delegation.tool import delegate_task
from herald.testing.fake_llm import Reply
from herald.testing.transcript_checks import transcript_problems
from herald.tools import ToolContext


def is_child(request) -> bool:
    return CHILD_SYSTEM in (request.system or "")


def delegate(*goals: str) -> Reply:
    return Reply.tool_call("delegate_task", {"tasks": [{"goal": g} for g in goals]})


def wait_until(predicate, tries: int = 400) -> bool:
    for _ in range(tries):
        if predicate():
            return True
        threading.Event().wait(0.05)
    return False


def results_of(fake_llm) -> list[dict]:
    last = [r for r in fake_llm.model_requests() if not is_child(r)][-1]
    return json.loads([m for m in last.messages if m["role"] == "tool"][-1]["content"])["results"]


def test_agents_lists_steers_and_stops_running_children(make_agent, fake_llm):
    steered = threading.Event()

    def child(request):
        if not is_child(request):
            return None
        goal = request.messages[1]["content"]
        tools = [m for m in request.messages if m["role"] == "tool"]
        if goal == "sleepy":
            return Reply.tool_call("terminal", {"command": "sleep 30"})
        if not tools:
            steered.wait(10)  # hold the first call until the test has steered
            return Reply.tool_call("todo", {"todos": [{"id": "1", "content": "x"}]})
        return Reply.text("saw steer" if "go left" in tools[-1]["content"] else "no steer")

    fake_llm.set_handler(child)
    fake_llm.enqueue(delegate("steerable", "sleepy"), Reply.text("done"))
    agent = make_agent()
    handle = agent.start_turn("go")
    assert wait_until(lambda: agent.session_id is not None)
    sid = agent.session_id
    assert wait_until(
        lambda: (
            len(board.children(sid)) == 2
            and all(c.handle is not None for c in board.children(sid))
            and board.children(sid)[1].tool_calls == 1
        )
    )
    listing = agents_command(sid, "")
    assert "sub-agent 1 [running" in listing and "sub-agent 2 [running" in listing
    assert "sleepy" in listing and "terminal" in listing
    tool_view = json.loads(delegate_task.handler({"action": "list"}, ToolContext(session_id=sid)))
    assert [c["status"] for c in tool_view["sub_agents"]] == ["running", "running"]

    assert agents_command(sid, "steer 1 go left").startswith("↪ Passed to sub-agent 1")
    steered.set()
    assert agents_command(sid, "stop 2") == "Stopping sub-agent 2."
    assert handle.result(timeout=60).completed
    first, second = results_of(fake_llm)
    assert first["status"] == "done" and first["final_text"] == "saw steer"
    assert second["status"] == "stopped" and "/agents stop" in second["partial_work"]
    rows = [m.to_api() for m in agent.store.get_messages(second["session_id"])]
    assert not transcript_problems(rows)
    assert "sub-agent 2 [stopped" in agents_command(sid, "list")
    assert agents_command(sid, "stop 2") == "sub-agent 2 already ended."
    assert agents_command(sid, "steer 9 hi").startswith("No sub-agent 9")


def test_pause_stops_new_spawns_until_resumed(make_agent, fake_llm):
    fake_llm.set_handler(lambda r: Reply.text("child ok") if is_child(r) else None)
    fake_llm.enqueue(Reply.text("hello"), delegate("a"), Reply.text("paused, fine"))
    agent = make_agent()
    sid = agent.start_turn("hi").result(timeout=30).session_id
    assert agents_command(sid, "pause").startswith("Paused")
    assert "spawning is paused" in agents_command(sid, "")
    agent.start_turn("delegate now").result(timeout=30)
    refusal = fake_llm.model_requests()[-1].messages[-1]["content"]
    assert refusal.startswith("[TOOL_ERROR]") and "paused" in refusal
    assert not any(is_child(r) for r in fake_llm.model_requests())

    assert agents_command(sid, "resume").startswith("Resumed")
    fake_llm.enqueue(delegate("a"), Reply.text("done"))
    agent.start_turn("again").result(timeout=30)
    assert results_of(fake_llm)[0]["final_text"] == "child ok"


def test_the_parent_turn_shows_a_status_line_per_child(make_agent, fake_llm):
    from herald.engine import TurnCallbacks

    fake_llm.set_handler(
        lambda r: (
            None
            if not is_child(r)
            else Reply.text("ok")
            if any(m["role"] == "tool" for m in r.messages)
            else Reply.tool_call("todo", {"todos": [{"id": "1", "content": "x"}]})
        )
    )
    fake_llm.enqueue(delegate("first job", "second job"), Reply.text("done"))
    lines: list[str] = []
    agent = make_agent()
    agent.start_turn("go", callbacks=TurnCallbacks(on_status=lines.append)).result(timeout=60)
    finals = [line for line in lines if "[done" in line]
    assert any(line.startswith("sub-agent 1 [done") and "first job" in line for line in finals)
    assert any(line.startswith("sub-agent 2 [done") and "1 tool call" in line for line in finals)
