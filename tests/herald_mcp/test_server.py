"""`herald mcp serve` driven by the SDK's own client, over stdio and streamable HTTP,
with turns answered by the fake model server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from mcp import Client, StdioServerParameters
from mcp.types import ElicitResult
from mcp_servers import free_port, wait_for_port

from herald.testing.fake_llm import FakeLLMServer, Reply
from herald.testing.homes import fake_model_config, make_home
from herald.testing.strong_secrets import MCP_TOKEN

TOKEN = MCP_TOKEN
SRC = str(Path(__file__).resolve().parents[2] / "src")


@pytest.fixture(scope="module")
def llm() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as server:
        yield server


@pytest.fixture(scope="module")
def served_root(llm, tmp_path_factory) -> Path:
    """A home for the served Herald and a work directory it runs in (shared by the
    module, so one HTTP server serves every test)."""
    root = tmp_path_factory.mktemp("served")
    make_home(root / "home", fake_model_config(llm), {"HERALD_MCP_TOKEN": TOKEN})
    (root / "work").mkdir()
    return root


@pytest.fixture
def served(served_root, llm) -> Path:
    llm.reset()
    scratch = served_root / "work" / "scratch"
    if scratch.exists():
        scratch.rmdir()
    return served_root


def server_env(root: Path) -> dict[str, str]:
    return {"HERALD_HOME": str(root / "home"), "PYTHONPATH": SRC}


def stdio(root: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "herald", "mcp", "serve"],
        env=server_env(root),
        cwd=str(root / "work"),
    )


@pytest.fixture(scope="module")
def http_server(served_root) -> Iterator[str]:
    served = served_root
    port = free_port()
    env = {**os.environ, **server_env(served)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "herald", "mcp", "serve", "--http", f"127.0.0.1:{port}"],
        cwd=served / "work",
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, proc, timeout=30)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(10)


def authed(url: str):
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    http = create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"})
    return http, streamable_http_client(url, http_client=http)


def tool_results(llm: FakeLLMServer, index: int) -> list[str]:
    return [m["content"] for m in llm.model_requests()[index].messages if m["role"] == "tool"]


EXPECTED_TOOLS = {
    "agent_run",
    "sessions_list",
    "session_search",
    "session_read",
    "memory_read",
    "skills_list",
    "skill_read",
    "send_message",
}


@pytest.mark.slow
async def test_stdio_tools_agent_run_progress_and_reading(served, llm):
    llm.enqueue(
        Reply.tool_call("todo", {"todos": [{"id": "1", "content": "wave", "status": "completed"}]}),
        Reply.text("Hello from Herald."),
    )
    progress: list[str] = []

    async def on_progress(value, total, message):
        progress.append(message or "")

    (served / "home" / "memories" / "MEMORY.md").write_text("The user likes tea.\n")
    async with Client(stdio(served)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert set(tools) == EXPECTED_TOOLS
        assert tools["sessions_list"].annotations.read_only_hint is True
        result = await client.call_tool(
            "agent_run", {"prompt": "say hello", "max_iterations": 5}, progress_callback=on_progress
        )
        assert not result.is_error, result.content
        data = json.loads(result.content[0].text)
        assert data["final_text"] == "Hello from Herald."
        assert data["exit_reason"] == "text_response"
        assert data["approvals"] == "unattended (denied)"  # this client declared no elicitation
        assert "running todo" in progress and "todo done" in progress

        listed = json.loads((await client.call_tool("sessions_list", {})).content[0].text)
        assert listed[0]["id"] == data["session_id"] and listed[0]["source"] == "mcp"
        read = await client.call_tool("session_read", {"session_id": data["session_id"]})
        assert "say hello" in read.content[0].text

        # continuing the session by id
        llm.enqueue(Reply.text("Again."))
        again = await client.call_tool(
            "agent_run", {"prompt": "once more", "session_id": data["session_id"]}
        )
        assert json.loads(again.content[0].text)["session_id"] == data["session_id"]
        history = [m["content"] for m in llm.model_requests()[-1].messages if m["role"] == "user"]
        assert history[0].startswith("say hello") and history[-1].startswith("once more")

        memory = await client.read_resource("herald://memory/MEMORY.md")
        assert "likes tea" in memory.contents[0].text
        uris = {str(r.uri) for r in (await client.list_resources()).resources}
        assert {"herald://sessions/recent", "herald://memory/USER.md"} <= uris

        no_gateway = await client.call_tool(
            "send_message", {"platform": "telegram", "chat_id": "1", "text": "hi"}
        )
        assert no_gateway.is_error and "no Herald gateway is running" in no_gateway.content[0].text


async def test_http_refuses_requests_without_the_token(served, http_server):
    async with httpx.AsyncClient() as http:
        response = await http.post(http_server, json={"jsonrpc": "2.0", "id": 1, "method": "x"})
        assert response.status_code == 401
        wrong = await http.post(http_server, json={}, headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401
    with pytest.raises(Exception):  # noqa: B017 - the SDK client cannot connect at all
        async with Client(http_server) as client:
            await client.list_tools()


async def test_http_refuses_oversized_and_deep_bodies_before_parsing(served, http_server):
    import asyncio
    from urllib.parse import urlsplit

    from herald.testing.raw_http import MIB, send_until_answered, status_of

    port = urlsplit(http_server).port
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {TOKEN}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {300 * MIB}\r\n\r\n"
    )
    answer, sent = await asyncio.to_thread(send_until_answered, port, head, iter(()))
    assert sent == 0 and status_of(answer) == 413 and b"4 MiB" in answer
    async with httpx.AsyncClient() as http:
        deep = await http.post(
            http_server,
            content=b"[" * 10_000 + b"]" * 10_000,
            headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"},
        )
    assert deep.status_code == 400 and "64 levels" in deep.json()["error"]
    async with httpx.AsyncClient() as http:
        slash = await http.get(
            http_server + "/",
            headers={"Authorization": f"Bearer {TOKEN}", "Host": "evil.example"},
        )
    assert "evil.example" not in slash.headers.get("location", "")


@pytest.mark.parametrize(
    "mode",
    [
        "auto",  # 2026-07-28: the question comes back as an InputRequiredResult
        "legacy",  # 2025-11-25: the server asks in the middle of the call
    ],
)
async def test_http_approval_is_relayed_by_elicitation_and_answered(served, llm, http_server, mode):
    scratch = served / "work" / "scratch"
    scratch.mkdir()
    llm.enqueue(Reply.tool_call("terminal", {"command": "rm -r scratch"}), Reply.text("Removed."))
    asked: list[str] = []

    async def answer(context, params):
        asked.append(params.message)
        return ElicitResult(action="accept", content={"decision": "once"})

    http, transport = authed(http_server)
    async with http, Client(transport, elicitation_callback=answer, mode=mode) as client:
        assert {t.name for t in (await client.list_tools()).tools} >= EXPECTED_TOOLS
        result = await client.call_tool("agent_run", {"prompt": "remove scratch"})
    data = json.loads(result.content[0].text)
    assert data["final_text"] == "Removed." and data["approvals"] == "relayed"
    assert len(asked) == 1 and "rm -r scratch" in asked[0], tool_results(llm, 1)
    assert not scratch.exists()


async def test_http_approval_denied_by_the_client(served, llm, http_server):
    scratch = served / "work" / "scratch"
    scratch.mkdir()
    llm.enqueue(Reply.tool_call("terminal", {"command": "rm -r scratch"}), Reply.text("Kept."))

    async def decline(context, params):
        return ElicitResult(action="decline")

    http, transport = authed(http_server)
    async with http, Client(transport, elicitation_callback=decline) as client:
        await client.call_tool("agent_run", {"prompt": "remove scratch"})
    assert scratch.exists()
    assert "denied" in tool_results(llm, 1)[0]


async def test_http_client_that_cannot_answer_gets_a_denial(served, llm, http_server):
    scratch = served / "work" / "scratch"
    scratch.mkdir()
    llm.enqueue(Reply.tool_call("terminal", {"command": "rm -r scratch"}), Reply.text("Kept."))
    http, transport = authed(http_server)
    async with http, Client(transport) as client:  # no elicitation callback
        result = await client.call_tool("agent_run", {"prompt": "remove scratch"})
    assert json.loads(result.content[0].text)["approvals"] == "unattended (denied)"
    assert scratch.exists()
    assert "no one can approve it here (mcp)" in tool_results(llm, 1)[0]


def test_http_without_a_token_refuses_to_start(tmp_path):
    from herald.mcp.server import ServeError, serve_http

    settings = make_home(tmp_path / "home", {})
    with pytest.raises(ServeError, match="without a bearer token: set HERALD_MCP_TOKEN"):
        serve_http(settings, "127.0.0.1:8799")
    env = {**os.environ, "HERALD_HOME": str(tmp_path / "home"), "PYTHONPATH": SRC}
    proc = subprocess.run(
        [sys.executable, "-m", "herald", "mcp", "serve", "--http", "0.0.0.0:8799"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert "over a non-loopback address without a bearer token" in proc.stderr
