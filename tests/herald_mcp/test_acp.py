"""`herald acp` driven by the agent-client-protocol package's client side, as an editor
would: a session in the editor's directory, a prompt with a streamed reply, a tool
permission request, and a cancel."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from acp import PROTOCOL_VERSION, spawn_agent_process, text_block
from acp.schema import AllowedOutcome, DeniedOutcome, RequestPermissionResponse

from herald.testing.fake_llm import Reply
from herald.testing.homes import fake_model_config, make_home

SRC = str(Path(__file__).resolve().parents[2] / "src")


class Editor:
    """The client side: records updates and answers permission requests."""

    def __init__(self, answer: str | None = "once") -> None:
        self.answer = answer
        self.updates: list[object] = []
        self.permissions: list[object] = []

    async def session_update(self, session_id, update, **kwargs):
        self.updates.append(update)

    async def request_permission(self, session_id, tool_call, options, **kwargs):
        self.permissions.append((tool_call, options))
        if self.answer is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=self.answer)
        )

    def kinds(self) -> list[str]:
        return [u.session_update for u in self.updates]

    def text(self) -> str:
        return "".join(
            u.content.text for u in self.updates if u.session_update == "agent_message_chunk"
        )


@pytest.fixture
def editor_dir(tmp_path, fake_llm):
    make_home(tmp_path / "home", fake_model_config(fake_llm))
    work = tmp_path / "project"
    work.mkdir()
    return tmp_path


async def start(root: Path, editor: Editor):
    return spawn_agent_process(
        editor,
        sys.executable,
        "-m",
        "herald",
        "acp",
        env={"HERALD_HOME": str(root / "home"), "PYTHONPATH": SRC},
        cwd=str(root),
    )


@pytest.mark.slow
async def test_prompt_streams_asks_permission_and_cancels(editor_dir, fake_llm):
    project = editor_dir / "project"
    (project / "scratch").mkdir()
    editor = Editor(answer="once")
    async with await start(editor_dir, editor) as (conn, _process):
        init = await conn.initialize(protocol_version=PROTOCOL_VERSION)
        assert init.agent_info.name == "herald" and init.agent_capabilities.load_session
        session = await conn.new_session(cwd=str(project), mcp_servers=[])

        # a streamed reply
        fake_llm.enqueue(Reply.text("Hello from Herald, streamed in pieces."))
        done = await conn.prompt(session_id=session.session_id, prompt=[text_block("hi")])
        assert done.stop_reason == "end_turn"
        chunks = [u for u in editor.updates if u.session_update == "agent_message_chunk"]
        assert len(chunks) > 1
        assert editor.text() == "Hello from Herald, streamed in pieces."

        # a tool that needs permission, run in the editor's directory once allowed
        editor.updates.clear()
        fake_llm.enqueue(
            Reply.tool_call("terminal", {"command": "rm -r scratch"}), Reply.text("Removed it.")
        )
        done = await conn.prompt(
            session_id=session.session_id, prompt=[text_block("remove scratch")]
        )
        assert done.stop_reason == "end_turn"
        ((tool_call, options),) = editor.permissions
        assert "rm -r scratch" in tool_call.title
        assert {o.option_id for o in options} >= {"once", "deny"}
        assert not (project / "scratch").exists()
        assert editor.kinds()[:2] == ["tool_call", "tool_call_update"]
        start_update, end_update = editor.updates[0], editor.updates[1]
        assert start_update.kind == "execute" and end_update.status == "completed"
        assert editor.text() == "Removed it."

        # cancel a turn stuck in a slow model call
        fake_llm.enqueue(Reply.text("too late", delay=30))
        running = asyncio.create_task(
            conn.prompt(session_id=session.session_id, prompt=[text_block("think slowly")])
        )
        assert await asyncio.to_thread(fake_llm.wait_for_requests, 4, 20)
        await conn.cancel(session_id=session.session_id)
        cancelled = await asyncio.wait_for(running, 30)
        assert cancelled.stop_reason == "cancelled"


@pytest.mark.slow
async def test_rejected_permission_keeps_the_file(editor_dir, fake_llm):
    project = editor_dir / "project"
    (project / "scratch").mkdir()
    editor = Editor(answer="deny")
    async with await start(editor_dir, editor) as (conn, _process):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        fake_llm.enqueue(
            Reply.tool_call("terminal", {"command": "rm -r scratch"}), Reply.text("Left it.")
        )
        await conn.prompt(session_id=session.session_id, prompt=[text_block("remove scratch")])
        assert (project / "scratch").exists()
        assert len(editor.permissions) == 1
        failed = [u for u in editor.updates if u.session_update == "tool_call_update"]
        assert failed[0].status == "failed"
        tool_result = next(
            m["content"] for m in fake_llm.model_requests()[1].messages if m["role"] == "tool"
        )
        assert "denied" in tool_result

        # the editor reopens the conversation: Herald replays it
        editor.updates.clear()
        await conn.load_session(cwd=str(project), session_id=session.session_id, mcp_servers=[])
        replayed = [(u.session_update, u.content.text) for u in editor.updates]
        assert replayed == [
            ("user_message_chunk", "remove scratch"),
            ("agent_message_chunk", "Left it."),
        ]


@pytest.mark.slow
async def test_the_editors_mcp_servers_give_the_session_their_tools(editor_dir, fake_llm):
    from acp.schema import EnvVariable, McpServerStdio, SseMcpServer
    from mcp_servers import TOY

    project = editor_dir / "project"
    editor = Editor()
    toy = McpServerStdio(
        name="toy box",  # not a valid Herald server name: it is made one
        command=sys.executable,
        args=[str(TOY)],
        env=[EnvVariable(name="TOY_MODE", value="editor")],
    )
    sse = SseMcpServer(name="old", url="http://127.0.0.1:9/sse", headers=[], type="sse")
    async with await start(editor_dir, editor) as (conn, _process):
        init = await conn.initialize(protocol_version=PROTOCOL_VERSION)
        assert init.agent_capabilities.mcp_capabilities.http
        assert not init.agent_capabilities.mcp_capabilities.sse
        session = await conn.new_session(cwd=str(project), mcp_servers=[toy, sse])
        fake_llm.enqueue(
            Reply.tool_call("mcp_toy-box_add", {"a": 2, "b": 40}), Reply.text("It is 42.")
        )
        done = await conn.prompt(session_id=session.session_id, prompt=[text_block("add")])
        assert done.stop_reason == "end_turn"
    # MCP tools are deferred (found through tool_search); the call loaded and ran it.
    second = fake_llm.model_requests()[1]
    names = {t["function"]["name"] for t in second.tools or []}
    assert "mcp_toy-box_add" in names
    assert not any(n.startswith("mcp_old") for n in names)  # SSE is not offered
    tool_result = next(
        m["content"] for m in fake_llm.model_requests()[1].messages if m["role"] == "tool"
    )
    assert "42" in tool_result
    assert editor.text() == "It is 42."


def test_editor_servers_become_session_configs_with_usable_unique_names():
    from acp.schema import EnvVariable, HttpHeader, HttpMcpServer, McpServerStdio, SseMcpServer

    from herald.acp.servers import editor_servers

    servers = editor_servers(
        [
            McpServerStdio(
                name="git", command="git-mcp", args=["--ro"], env=[EnvVariable(name="A", value="1")]
            ),
            McpServerStdio(name="git", command="other", args=[], env=[]),
            HttpMcpServer(
                name="docs: v2!",
                url="http://127.0.0.1:1/mcp",
                headers=[HttpHeader(name="X-K", value="v")],
                type="http",
            ),
            SseMcpServer(name="old", url="http://127.0.0.1:1/sse", headers=[], type="sse"),
        ],
        cwd="/work/project",
        taken={"git"},  # already in mcp.servers: the configured one keeps the name
    )
    assert list(servers) == ["git-2", "git-3", "docs-v2"]
    git = servers["git-2"]
    assert (git.command, git.args, git.env, git.cwd, git.start) == (
        "git-mcp",
        ["--ro"],
        {"A": "1"},
        "/work/project",
        "session",
    )
    assert servers["docs-v2"].url == "http://127.0.0.1:1/mcp" and servers["docs-v2"].headers == {
        "X-K": "v"
    }
