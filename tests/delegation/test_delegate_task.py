"""`delegate_task` end to end against the fake model server: parallel children in their
own sessions, results in call order, refusals, approvals through the parent's human,
interrupts, timeouts with partial work, costs and the concurrency limit."""

from __future__ import annotations

import json
import threading

import pytest

from herald.delegation import board
from herald.delegation.runner import CHILD_SYSTEM
from herald.engine import ExitReason, Humans
from herald.testing.fake_llm import Reply
from herald.testing.transcript_checks import transcript_problems

NEEDS_APPROVAL = "python3 -c 'print(6*7)'"


def is_child(request) -> bool:
    return CHILD_SYSTEM in (request.system or "")


def delegate(*goals: str, **extra) -> Reply:
    return Reply.tool_call("delegate_task", {"tasks": [{"goal": g} for g in goals], **extra})


def results_of(fake_llm) -> list[dict]:
    """The delegate_task result the parent's last request carried."""
    last = [r for r in fake_llm.model_requests() if not is_child(r)][-1]
    for message in reversed(last.messages):
        if message["role"] == "tool":  # OpenAI wire
            return json.loads(message["content"])["results"]
        blocks = message["content"] if isinstance(message["content"], list) else []
        for block in blocks:  # Anthropic wire: a tool_result block in a user message
            if block.get("type") == "tool_result":
                content = block["content"]
                text = content if isinstance(content, str) else content[0]["text"]
                return json.loads(text)["results"]
    raise AssertionError("no delegate_task result in the parent's last request")


def stored_api(agent, session_id) -> list[dict]:
    return [m.to_api() for m in agent.store.get_messages(session_id)]


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_three_children_run_in_parallel_and_answer_in_call_order(make_agent, fake_llm, api):
    arrived = threading.Barrier(3, timeout=60)

    def child(request):
        if not is_child(request):
            return None
        try:
            arrived.wait()  # all three are asking at once, or this breaks
            together = "together"
        except threading.BrokenBarrierError:
            together = "alone"
        return Reply.text(f"answer to {request.last_user_text} ({together})")

    fake_llm.set_handler(child)
    fake_llm.enqueue(delegate("alpha", "beta", "gamma"), Reply.text("all three answered"))
    agent = make_agent(api=api)
    result = agent.start_turn("split this up").result(timeout=60)

    assert result.exit_reason is ExitReason.TEXT_RESPONSE
    assert result.final_text == "all three answered"
    results = results_of(fake_llm)
    assert [r["goal"] for r in results] == ["alpha", "beta", "gamma"]
    assert [r["final_text"] for r in results] == [
        f"answer to {g} (together)" for g in ("alpha", "beta", "gamma")
    ]
    for r in results:
        assert r["status"] == "done" and r["exit_reason"] == "text_response"
        assert r["iterations"] == 1
        session = agent.store.get_session(r["session_id"])
        assert session.parent_id == result.session_id and session.source == "delegate"
    assert len({r["session_id"] for r in results}) == 3


def test_children_never_see_forbidden_tools(make_agent, fake_llm):
    fake_llm.set_handler(lambda r: Reply.text("ok") if is_child(r) else None)
    fake_llm.enqueue(delegate("look around"), Reply.text("done"))
    agent = make_agent()
    agent.start_turn("go").result(timeout=60)
    parent_first = fake_llm.model_requests()[0]
    child = next(r for r in fake_llm.model_requests() if is_child(r))
    parent_names = {t["function"]["name"] for t in parent_first.tools}
    child_names = {t["function"]["name"] for t in child.tools}
    assert {"delegate_task", "clarify", "memory", "cronjob"} <= parent_names
    assert not child_names & {"delegate_task", "clarify", "memory", "cronjob"}
    assert {"terminal", "read_file", "write_file"} <= child_names
    assert child_names <= parent_names


def test_a_child_calling_delegate_task_at_depth_one_is_refused(make_agent, fake_llm):
    def child(request):
        if not is_child(request):
            return None
        if not any(m["role"] == "tool" for m in request.messages):
            return delegate("grandchild work")
        return Reply.text("did it myself")

    fake_llm.set_handler(child)
    fake_llm.enqueue(delegate("needs help"), Reply.text("done"))
    agent = make_agent()
    agent.start_turn("go").result(timeout=60)
    (report,) = results_of(fake_llm)
    assert report["final_text"] == "did it myself"
    child_rows = stored_api(agent, report["session_id"])
    refusal = next(m for m in child_rows if m["role"] == "tool")["content"]
    assert refusal.startswith("[TOOL_ERROR]") and "delegate_task" in refusal
    # Only the one child session exists: the grandchild never started.
    children = [s for s in agent.store.list_sessions(limit=50) if s.source == "delegate"]
    assert len(children) == 1


def test_the_depth_check_refuses_at_call_time(make_agent, fake_llm):
    """Even with the tool offered, a session at the depth limit cannot delegate."""
    from herald.delegation.tool import delegate_task
    from herald.tools import ToolArgumentError

    agent = make_agent()
    fake_llm.enqueue(Reply.text("hi"))
    top = agent.start_turn("hi").result(timeout=30).session_id
    child = agent.store.create_session(source="delegate", parent_id=top)
    ctx = agent.tool_context
    ctx.session_id = child
    ctx.spawn_agent = agent.spawn
    with pytest.raises(ToolArgumentError, match="depth 1"):
        delegate_task.handler({"tasks": [{"goal": "x"}]}, ctx)


def test_lineage_walk_is_bounded_and_safe_against_cycles(make_agent):
    import sqlite3

    from herald.delegation import MAX_LINEAGE_HOPS, delegation_depth

    agent = make_agent()
    store = agent.store
    a = store.create_session(source="delegate")
    b = store.create_session(source="delegate", parent_id=a)
    with sqlite3.connect(store.path) as conn:  # stored data that loops: a → b → a
        conn.execute("UPDATE sessions SET parent_id = ? WHERE id = ?", (b, a))
    assert delegation_depth(store, b) == MAX_LINEAGE_HOPS + 1
    chain = [store.create_session(source="cli")]
    for _ in range(12):
        chain.append(store.create_session(source="delegate", parent_id=chain[-1]))
    assert delegation_depth(store, chain[2]) == 2
    assert delegation_depth(store, chain[-1]) == MAX_LINEAGE_HOPS + 1


@pytest.mark.parametrize("answer", ["once", "deny"])
def test_a_childs_dangerous_command_goes_to_the_parents_human(make_agent, fake_llm, answer):
    def child(request):
        if not is_child(request):
            return None
        if not any(m["role"] == "tool" for m in request.messages):
            return Reply.tool_call("terminal", {"command": NEEDS_APPROVAL})
        tool = [m for m in request.messages if m["role"] == "tool"][-1]["content"]
        return Reply.text("ran: " + tool[:80])

    asked = []

    def approve(prompt):
        asked.append(prompt)
        return answer

    fake_llm.set_handler(child)
    fake_llm.enqueue(delegate("compute"), Reply.text("done"))
    agent = make_agent()
    agent.start_turn("go", humans=Humans(approve=approve)).result(timeout=60)
    assert len(asked) == 1
    assert asked[0].requester == "sub-agent 1"
    assert f"sub-agent 1 wants to run:\n```\n│ {NEEDS_APPROVAL}" in asked[0].text()
    (report,) = results_of(fake_llm)
    if answer == "once":
        assert report["final_text"].startswith("ran: 42")
    else:
        assert "[TOOL_ERROR]" in report["final_text"] and "denied" in report["final_text"]


def test_an_unattended_parents_children_are_denied_without_asking(make_agent, fake_llm):
    def child(request):
        if not is_child(request):
            return None
        if not any(m["role"] == "tool" for m in request.messages):
            return Reply.tool_call("terminal", {"command": NEEDS_APPROVAL})
        return Reply.text([m for m in request.messages if m["role"] == "tool"][-1]["content"])

    fake_llm.set_handler(child)
    fake_llm.enqueue(delegate("compute"), Reply.text("done"))
    # Even where the config lets unattended delegate turns run everything.
    agent = make_agent(config={"approvals": {"unattended": {"delegate": "allow"}}})
    agent.start_turn("go").result(timeout=60)
    (report,) = results_of(fake_llm)
    assert "no one can approve" in report["final_text"]


def test_children_of_an_unattended_parent_inherit_its_allow_patterns(
    make_agent, fake_llm, tmp_path
):
    def child(request):
        if not is_child(request):
            return None
        done = [m["content"] for m in request.messages if m["role"] == "tool"]
        if len(done) == 0:
            return Reply.tool_call("terminal", {"command": "touch child.txt"})
        if len(done) == 1:
            return Reply.tool_call("terminal", {"command": "mkdir nope"})
        return Reply.text(" || ".join(done))

    fake_llm.set_handler(child)
    fake_llm.enqueue(delegate("make the file"), Reply.text("done"))
    # the parent is a cron run of a job that allowed `touch *` (nobody approves)
    agent = make_agent(
        source="cron",
        unattended_allow=("touch *",),
        unattended_hint="`herald cron edit job --allow {pattern}`",
    )
    agent.start_turn("go").result(timeout=60)
    (report,) = results_of(fake_llm)
    touched, refused = report["final_text"].split(" || ")
    assert (tmp_path / "work" / "child.txt").exists() and "Not run" not in touched
    assert "Not run: `mkdir nope` is not known read-only" in refused
    assert "herald cron edit job --allow 'mkdir *'" in refused  # the parent's hint
    assert not (tmp_path / "work" / "nope").exists()


@pytest.mark.slow
def test_interrupting_the_parent_interrupts_every_child_and_transcripts_stay_legal(
    make_agent, fake_llm
):
    def child(request):
        if not is_child(request):
            return None
        return Reply.tool_call("terminal", {"command": "sleep 30"})

    fake_llm.set_handler(child)
    fake_llm.enqueue(delegate("one", "two", "three"), Reply.text("unused"))
    agent = make_agent()
    handle = agent.start_turn("go")
    assert fake_llm.wait_for_requests(4, timeout=30)
    # Wait until every child is inside its tool call, then Ctrl-C the parent.
    for _ in range(400):
        children = board.children(agent.session_id)
        if len(children) == 3 and all(c.tool_calls == 1 for c in children):
            break
        threading.Event().wait(0.05)
    handle.interrupt()
    result = handle.result(timeout=60)
    assert result.exit_reason is ExitReason.INTERRUPTED_BY_USER
    parent_rows = stored_api(agent, result.session_id)
    assert not transcript_problems(parent_rows)
    report = json.loads([m for m in parent_rows if m["role"] == "tool"][-1]["content"])
    assert [r["status"] for r in report["results"]] == ["interrupted"] * 3
    for r in report["results"]:
        rows = stored_api(agent, r["session_id"])
        assert not transcript_problems(rows)
        assert rows[-1]["role"] == "tool"  # the terminal call got its result
        assert "partial_work" in r


def test_a_timed_out_child_returns_its_partial_work(make_agent, fake_llm, tmp_path):
    def child(request):
        if not is_child(request):
            return None
        tools = [m for m in request.messages if m["role"] == "tool"]
        if not tools:
            return Reply.tool_call("write_file", {"path": "notes.txt", "content": "half done\n"})
        return Reply.tool_call("terminal", {"command": "sleep 30"})

    fake_llm.set_handler(child)
    fake_llm.enqueue(delegate("long job"), Reply.text("ok"))
    agent = make_agent(config={"delegation": {"timeout_seconds": 2}})
    agent.start_turn("go").result(timeout=60)
    (report,) = results_of(fake_llm)
    assert report["status"] == "timed_out"
    assert report["files_written"] == ["notes.txt"]
    assert report["tool_calls"] == ["write_file", "terminal"]
    assert "timeout_seconds" in report["partial_work"]
    assert "write_file" in report["partial_work"] and "notes.txt" in report["partial_work"]
    assert (tmp_path / "work" / "notes.txt").read_text() == "half done\n"
    assert not transcript_problems(stored_api(agent, report["session_id"]))


def test_children_costs_roll_up_into_the_parent_session(make_agent, fake_llm):
    fake_llm.set_handler(lambda r: Reply.text("child answer") if is_child(r) else None)
    fake_llm.enqueue(delegate("a", "b"), Reply.text("done"))
    agent = make_agent(config={"model": {"name": "gpt-4.1-mini"}})
    result = agent.start_turn("go").result(timeout=60)
    store = agent.store
    reports = results_of(fake_llm)
    child_costs = [store.get_session(r["session_id"]).estimated_cost_usd for r in reports]
    assert all(c > 0 for c in child_costs)
    assert [r["cost_usd"] for r in reports] == pytest.approx(child_costs)
    usage = store.list_usage(result.session_id)
    own = sum(u.cost_usd for u in usage if u.kind == "main")
    delegated = [u for u in usage if u.kind == "delegate"]
    assert len(delegated) == 2
    assert sum(u.cost_usd for u in delegated) == pytest.approx(sum(child_costs))
    parent = store.get_session(result.session_id)
    assert parent.estimated_cost_usd == pytest.approx(own + sum(child_costs))
    child_prompt = sum(store.get_session(r["session_id"]).prompt_tokens for r in reports)
    own_prompt = sum(u.prompt_tokens for u in usage if u.kind == "main")
    assert parent.prompt_tokens == own_prompt + child_prompt


def test_max_concurrent_queues_the_rest(make_agent, fake_llm):
    first_two = threading.Barrier(2, timeout=60)  # a sync point, generous for a loaded CI machine
    seen: list[list[str]] = []

    def child(request):
        if not is_child(request):
            return None
        # The parent's session exists before its first model call, so before any child's.
        statuses = [c.status for c in board.children(agent.session_id)]
        seen.append(statuses)
        if request.last_user_text in ("a", "b"):
            first_two.wait()
        return Reply.text("ok " + request.last_user_text)

    fake_llm.set_handler(child)
    fake_llm.enqueue(delegate("a", "b", "c"), Reply.text("done"))
    agent = make_agent(config={"delegation": {"max_concurrent": 2}})
    fake_llm.enqueue()
    handle = agent.start_turn("go")
    handle.result(timeout=60)
    assert [r["final_text"] for r in results_of(fake_llm)] == ["ok a", "ok b", "ok c"]
    # While a and b ran, c waited; never more than two ran at once.
    assert all(s.count("running") <= 2 for s in seen)
    assert any(s.count("queued") == 1 and s.count("running") == 2 for s in seen)


def test_too_many_tasks_in_one_call_are_refused(make_agent, fake_llm):
    fake_llm.enqueue(delegate("a", "b", "c"), Reply.text("ok"))
    agent = make_agent(config={"delegation": {"max_children_per_call": 2}})
    agent.start_turn("go").result(timeout=30)
    last = fake_llm.model_requests()[-1]
    content = [m for m in last.messages if m["role"] == "tool"][-1]["content"]
    assert content.startswith("[TOOL_ERROR]") and "at most 2" in content
    assert len(fake_llm.model_requests()) == 2  # no child ever asked the model


def test_a_task_may_name_its_model_and_toolsets(make_agent, fake_llm):
    fake_llm.set_handler(lambda r: Reply.text("ok") if is_child(r) else None)
    fake_llm.enqueue(
        Reply.tool_call(
            "delegate_task",
            {
                "tasks": [
                    {"goal": "read only", "toolsets": ["file"], "model": "fake-model-mini"},
                    {"goal": "bad", "toolsets": ["no-such-toolset"]},
                ]
            },
        ),
        Reply.text("done"),
    )
    agent = make_agent()
    agent.start_turn("go").result(timeout=60)
    good, bad = results_of(fake_llm)
    (child,) = [r for r in fake_llm.model_requests() if is_child(r)]
    assert child.model == "fake-model-mini"
    assert {t["function"]["name"] for t in child.tools} == {
        "read_file",
        "write_file",
        "patch",
        "search_files",
    }
    assert good["status"] == "done"
    assert bad["status"] == "failed" and "no-such-toolset" in bad["error"]


def test_a_bare_goal_and_an_object_context_are_accepted(make_agent, fake_llm):
    """Models sometimes send a task as a plain string, or the context as an object: both
    still reach a sub-agent (the goal as given, the context as JSON text)."""
    fake_llm.set_handler(lambda r: Reply.text("ok: " + r.last_user_text) if is_child(r) else None)
    tasks = ["alpha", {"goal": "beta", "context": {"path": "/srv/app", "retries": 2}}]
    fake_llm.enqueue(Reply.tool_call("delegate_task", {"tasks": tasks}), Reply.text("done"))
    agent = make_agent()
    agent.start_turn("go").result(timeout=60)
    alpha, beta = results_of(fake_llm)
    assert alpha["goal"] == "alpha" and alpha["final_text"] == "ok: alpha"
    assert beta["status"] == "done"
    assert '{"path": "/srv/app", "retries": 2}' in beta["final_text"]
