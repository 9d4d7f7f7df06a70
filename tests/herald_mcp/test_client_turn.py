"""A turn against the fake model server that calls an MCP tool, and the approval layer
in front of MCP calls (per-server policy, a human's answer, the unattended policy)."""

from __future__ import annotations

import json

from mcp_servers import toy_stdio, unfenced

from herald.engine import ExitReason, Humans
from herald.mcp import McpToolOverlay, agent_registry
from herald.testing.fake_llm import Reply
from herald.testing.homes import fake_model_config, make_home, merge
from herald.tools import registry


def mcp_agent(make_agent, tmp_path, fake_llm, server: dict, **options):
    """An agent whose registry is the overlay built from its own config."""
    config = {"mcp": {"servers": {"toy": server}}}
    settings = make_home(tmp_path / "home", merge(fake_model_config(fake_llm), config))
    overlay = agent_registry(settings)
    assert isinstance(overlay, McpToolOverlay)
    agent = make_agent(config=config, registry=overlay, **options)
    return agent, overlay


def tool_messages(request) -> list[dict]:
    """The tool results of `request`, with what the server said unfenced."""
    return [
        {**m, "content": unfenced(m["content"])} for m in request.messages if m["role"] == "tool"
    ]


def test_turn_calls_an_mcp_tool_and_gets_its_result(make_agent, fake_llm, tmp_path):
    agent, overlay = mcp_agent(make_agent, tmp_path, fake_llm, toy_stdio(approve="never"))
    try:
        fake_llm.enqueue(
            Reply.tool_call("mcp_toy_add", {"a": 19, "b": 23}), Reply.text("It is 42.")
        )
        result = agent.run_turn("add 19 and 23 with the toy server")
        assert result.exit_reason is ExitReason.TEXT_RESPONSE
        assert result.final_text == "It is 42."
        first, second = fake_llm.model_requests()
        # MCP tools are deferred: listed in tool_search, then appended once called.
        search = next(t for t in first.tools if t["function"]["name"] == "tool_search")
        assert "- mcp_toy_add: " in search["function"]["description"]
        names = [t["function"]["name"] for t in second.tools]
        assert "mcp_toy_add" in names
        builtins = [n for n in names if not n.startswith("mcp_")]
        assert names[: len(builtins)] == builtins  # MCP tools come after every built-in
        assert tool_messages(second)[0]["content"] == "42"
        sent = next(m for m in second.messages if m["role"] == "tool")["content"]
        assert sent.startswith("<untrusted-content id=") and 'source="mcp:toy"' in sent
    finally:
        overlay.close()


def test_a_server_configured_trusted_is_not_fenced(make_agent, fake_llm, tmp_path):
    agent, overlay = mcp_agent(
        make_agent, tmp_path, fake_llm, toy_stdio(approve="never", trusted=True)
    )
    try:
        fake_llm.enqueue(Reply.tool_call("mcp_toy_add", {"a": 1, "b": 2}), Reply.text("3"))
        agent.run_turn("add 1 and 2")
        sent = next(m for m in fake_llm.model_requests()[1].messages if m["role"] == "tool")
        assert sent["content"] == "3"
        rows = agent.store.get_messages(agent.session_id)
        assert [r.provenance for r in rows if r.role == "tool"] == ["trusted"]
    finally:
        overlay.close()


def test_writing_tool_needs_approval_and_a_denial_is_reported(make_agent, fake_llm, tmp_path):
    agent, overlay = mcp_agent(make_agent, tmp_path, fake_llm, toy_stdio())  # default policy
    asked = []

    def approve(prompt):
        asked.append(prompt)
        return "deny"

    try:
        fake_llm.enqueue(
            Reply.tool_call("mcp_toy_write_note", {"text": "hi"}), Reply.text("Denied, ok.")
        )
        handle = agent.start_turn("note hi", humans=Humans(approve=approve))
        result = handle.result(timeout=60)
        assert result.exit_reason is ExitReason.TEXT_RESPONSE
        assert len(asked) == 1
        assert "toy.write_note" in asked[0].command and '"hi"' in asked[0].command
        assert asked[0].choices == ("once", "session", "deny")
        content = tool_messages(fake_llm.model_requests()[1])[0]["content"]
        assert content.startswith("[TOOL_ERROR]") and "denied" in content
    finally:
        overlay.close()


def test_session_approval_is_remembered(make_agent, fake_llm, tmp_path):
    agent, overlay = mcp_agent(make_agent, tmp_path, fake_llm, toy_stdio(approve="always"))
    asked = []

    def approve(prompt):
        asked.append(prompt)
        return "session"

    try:
        fake_llm.enqueue(
            Reply.tool_call("mcp_toy_add", {"a": 1, "b": 1}),
            Reply.tool_call("mcp_toy_add", {"a": 2, "b": 2}),
            Reply.text("done"),
        )
        agent.start_turn("add twice", humans=Humans(approve=approve)).result(timeout=60)
        assert len(asked) == 1  # "always" asks even for read-only tools; "session" stays
        contents = [m["content"] for m in tool_messages(fake_llm.model_requests()[2])]
        assert contents == ["2", "4"]
    finally:
        overlay.close()


def test_unattended_turn_is_refused_not_auto_approved(make_agent, fake_llm, tmp_path):
    agent, overlay = mcp_agent(make_agent, tmp_path, fake_llm, toy_stdio(), source="cron")
    try:
        fake_llm.enqueue(Reply.tool_call("mcp_toy_write_note", {"text": "x"}), Reply.text("ok"))
        agent.start_turn("note x").result(timeout=60)  # no humans: unattended
        content = tool_messages(fake_llm.model_requests()[1])[0]["content"]
        assert content.startswith("[TOOL_ERROR] Not run")
        assert "no one can approve it here (cron)" in content
    finally:
        overlay.close()


def test_dangerous_policy_asks_only_for_tools_not_marked_read_only(make_agent, fake_llm, tmp_path):
    agent, overlay = mcp_agent(make_agent, tmp_path, fake_llm, toy_stdio(approve="dangerous"))
    asked = []
    try:
        fake_llm.enqueue(
            Reply.tool_call("mcp_toy_add", {"a": 5, "b": 5}),
            Reply.tool_call("mcp_toy_write_note", {"text": "y"}),
            Reply.text("ok"),
        )
        humans = Humans(approve=lambda p: asked.append(p.command) or "once")
        agent.start_turn("go", humans=humans).result(timeout=60)
        assert len(asked) == 1 and "write_note" in asked[0]
        contents = [m["content"] for m in tool_messages(fake_llm.model_requests()[2])]
        assert contents == ["10", "noted: y"]
    finally:
        overlay.close()


def test_agents_of_one_home_share_running_servers_until_the_last_closes(tmp_path):
    settings = make_home(tmp_path / "shared", {"mcp": {"servers": {"toy": toy_stdio()}}})
    first, second = agent_registry(settings), agent_registry(settings)
    assert first is not second  # each agent has its own overlay
    assert first.manager is second.manager  # but one set of server processes
    first.close()
    assert not second.manager.closed
    second.close()
    assert second.manager.closed
    third = agent_registry(settings)  # a later agent starts afresh
    assert third.manager is not first.manager
    third.close()


def test_no_servers_means_the_plain_registry(tmp_path):
    settings = make_home(tmp_path / "plain", {})
    assert agent_registry(settings) is registry


def test_disabled_toolset_hides_mcp_tools(make_agent, fake_llm, tmp_path):
    config = {
        "mcp": {"servers": {"toy": toy_stdio(approve="never")}},
        "toolsets": {"disabled": ["mcp-toy"]},
    }
    settings = make_home(tmp_path / "home", merge(fake_model_config(fake_llm), config))
    overlay = agent_registry(settings)
    try:
        agent = make_agent(config=config, registry=overlay)
        fake_llm.enqueue(Reply.text("hi"))
        agent.run_turn("hi")
        names = [t["function"]["name"] for t in fake_llm.model_requests()[0].tools]
        assert not any(n.startswith("mcp_toy") for n in names)
        assert json.dumps(names)  # the built-ins are still there
        assert "todo" in names
    finally:
        overlay.close()


def test_crash_restart_budget_is_per_turn(make_agent, fake_llm, tmp_path):
    agent, overlay = mcp_agent(make_agent, tmp_path, fake_llm, toy_stdio(approve="never"))
    try:
        fake_llm.enqueue(
            Reply.tool_call("mcp_toy_crash", {}),
            Reply.tool_call("mcp_toy_crash", {}),
            Reply.text("it keeps crashing"),
        )
        first = agent.run_turn("crash it twice")
        contents = [m["content"] for m in tool_messages(fake_llm.model_requests()[2])]
        assert "was restarted" in contents[0]
        assert "already crashed once this turn" in contents[1]
        fake_llm.enqueue(Reply.tool_call("mcp_toy_add", {"a": 1, "b": 1}), Reply.text("2"))
        agent.run_turn("add now")  # a new turn may restart the crashed server again
        assert tool_messages(fake_llm.model_requests()[4])[-1]["content"] == "2"
        assert first.session_id
    finally:
        overlay.close()
