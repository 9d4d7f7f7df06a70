"""Context engineering inside real turns, against the fake LLM server: compression under
a small window, the frozen prompt, archived rows, overflow recovery, summarizer failure,
the persisted token anchor and prompt rebuilds on resume."""

from __future__ import annotations

import itertools

import pytest

from herald.context.compressor import SECTIONS, SUMMARY_MARK
from herald.engine import ExitReason
from herald.testing.fake_llm import Fault, Reply
from herald.testing.transcript_checks import transcript_problems

SMALL_WINDOW = {
    "model": {"context_length": 6000},
    "context": {"output_reserve_tokens": 500, "tail_tokens": 1200},
}


def is_summarizer(req) -> bool:
    return bool(req.system) and req.system.startswith("You compress the history")


def sections_text() -> str:
    return "\n\n".join(f"## {s}\nsummary of {s}" for s in SECTIONS)


def terminalish(i: int) -> Reply:
    return Reply.tool_call(
        "todo",
        {"todos": [{"id": str(i), "content": f"step {i} " + "w" * 1500, "status": "completed"}]},
    )


def scripted(max_tool_rounds: int, summarizer=lambda req: Reply.text(sections_text())):
    """Main calls do `max_tool_rounds` tool rounds per turn then answer; summarizer calls
    get `summarizer(req)`."""
    state = {"rounds": 0}

    def handler(req):
        if is_summarizer(req):
            return summarizer(req)
        if not req.tools:
            return Reply.text("summary")
        last = req.messages[-1]
        if last["role"] == "user":
            state["rounds"] = 0
        if state["rounds"] < max_tool_rounds:
            state["rounds"] += 1
            return terminalish(state["rounds"])
        return Reply.text("done with this turn")

    return handler


def main_requests(server):
    return [r for r in server.model_requests() if not is_summarizer(r)]


def test_thirty_iterations_compress_and_keep_the_prompt_frozen(make_agent, fake_llm):
    fake_llm.set_handler(scripted(30))
    statuses: list[str] = []
    agent = make_agent(config=SMALL_WINDOW)
    agent.callbacks.on_status = statuses.append
    result = agent.run_turn("work through thirty steps")
    assert result.exit_reason is ExitReason.TEXT_RESPONSE, result.error

    requests = main_requests(fake_llm)
    assert len(requests) == 31
    assert len({r.system for r in requests}) == 1  # invariant 1, across compressions too
    compressions = [s for s in statuses if s.startswith("compressed the conversation")]
    assert compressions, statuses
    for req in requests:
        assert not transcript_problems(req.messages)  # invariant 3 after every compression
        roles = [m["role"] for m in req.messages]
        # Never the summary and the next assistant step (or two user turns) in a row.
        assert all(a != b or a == "tool" for a, b in itertools.pairwise(roles)), roles
    assert any(SUMMARY_MARK in (m.get("content") or "") for m in requests[-1].messages)
    assert requests[-1].messages[1]["content"] == "work through thirty steps"  # head kept

    # Invariant 4: nothing deleted; archived rows stay searchable.
    sid = result.session_id
    every = agent.store.get_messages(sid, include_inactive=True)
    archived = [m for m in every if not m.active]
    assert archived and all(m.compacted for m in archived)
    hits = agent.store.search_messages("step", session_id=sid, limit=100)
    assert any(not h.active for h in hits)
    usage_kinds = {u.kind for u in agent.store.list_usage(sid)}
    assert usage_kinds == {"main", "summary"}


def test_overflow_error_compresses_and_retries(make_agent, fake_llm):
    fake_llm.set_handler(scripted(8))
    agent = make_agent(config={"model": {"context_length": 200_000}})
    first = agent.run_turn("do eight steps")
    assert first.exit_reason is ExitReason.TEXT_RESPONSE
    fake_llm.reset()
    calls = {"n": 0}

    def overflow_once(req):
        if is_summarizer(req):
            return Reply.text(sections_text())
        calls["n"] += 1
        return Fault.context_overflow() if calls["n"] == 1 else Reply.text("fits now")

    fake_llm.set_handler(overflow_once)
    second = agent.run_turn("and now the report")
    assert second.exit_reason is ExitReason.TEXT_RESPONSE, second.error
    assert second.final_text == "fits now"
    retried = main_requests(fake_llm)[-1]
    assert len(retried.messages) < len(main_requests(fake_llm)[0].messages)
    assert any(SUMMARY_MARK in (m.get("content") or "") for m in retried.messages)
    for req in main_requests(fake_llm):
        assert not transcript_problems(req.messages)


def test_failing_summarizer_uses_fallback_and_persists_a_cooldown(make_agent, fake_llm):
    fake_llm.set_handler(scripted(30, summarizer=lambda req: Fault.status(500)))
    statuses: list[str] = []
    agent = make_agent(config=SMALL_WINDOW)
    agent.callbacks.on_status = statuses.append
    result = agent.run_turn("work through thirty steps")
    assert result.exit_reason is ExitReason.TEXT_RESPONSE
    last = main_requests(fake_llm)[-1]
    summary = next(m["content"] for m in last.messages if SUMMARY_MARK in (m.get("content") or ""))
    assert "## Goal\nwork through thirty steps" in summary  # the deterministic fallback
    for req in main_requests(fake_llm):
        assert not transcript_problems(req.messages)
    state = agent.store.get_session(result.session_id).meta["context_engine"]
    assert state["failures"] >= 1 and state["cooldown_until"] > 0
    summarizer_calls = [r for r in fake_llm.model_requests() if is_summarizer(r)]
    assert len(summarizer_calls) == 3  # one attempt + 2 retries, then the cool-down holds
    resumed = make_agent(config=SMALL_WINDOW, session_id=result.session_id)
    assert resumed.context_engine.state.failures == state["failures"]


def test_token_anchor_survives_a_resume(make_agent, fake_llm):
    fake_llm.set_handler(scripted(2))
    agent = make_agent()
    sid = agent.run_turn("two steps").session_id
    anchor = agent.store.get_session(sid).meta["token_anchor"]
    assert anchor["prompt_tokens"] > 0
    assert anchor["message_count"] == len(agent.transcript.messages)
    resumed = make_agent(session_id=sid)
    assert resumed.accountant.anchor is not None
    assert resumed.accountant.anchor.prompt_tokens == anchor["prompt_tokens"]


def test_prompt_is_rebuilt_on_resume_only_when_the_runtime_changed(
    make_agent, fake_llm, tmp_path, caplog
):
    fake_llm.default_reply = Reply.text("ok")
    agent = make_agent(cwd=str(tmp_path))
    sid = agent.run_turn("hi").session_id
    same = make_agent(session_id=sid, cwd=str(tmp_path))
    assert same.system_prompt == agent.system_prompt
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    with caplog.at_level("INFO"):
        moved = make_agent(session_id=sid, cwd=str(elsewhere))
    assert moved.system_prompt != agent.system_prompt
    assert f"Working directory: {elsewhere}" in moved.system_prompt
    assert "working directory changed" in caplog.text


def test_project_context_files_reach_the_prompt(make_agent, fake_llm, tmp_path):
    (tmp_path / "AGENTS.md").write_text("Always run `make check` before committing.")
    fake_llm.default_reply = Reply.text("ok")
    make_agent(cwd=str(tmp_path)).run_turn("hi")
    system = fake_llm.model_requests()[0].system
    assert "Always run `make check` before committing." in system
    assert system.index("Project context") < system.index("## Environment")


@pytest.mark.parametrize("topic", ["the billing module"])
def test_compress_now_focuses_the_summary(make_agent, fake_llm, topic):
    fake_llm.set_handler(scripted(8))
    agent = make_agent()
    agent.run_turn("eight steps please")
    assert agent.compress_now(focus=topic)
    summarizer = [r for r in fake_llm.model_requests() if is_summarizer(r)][-1]
    assert f"focus this summary on: {topic}" in summarizer.messages[-1]["content"]
