"""`mcp.serve.relay_approvals: false` and `mcp.serve.allow`: with relaying off no client
answers an approval, even one that declared elicitation; the turn is unattended, so only
known read-only commands and the `mcp.serve.allow` patterns run."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from mcp import Client, StdioServerParameters
from mcp.types import ElicitResult

from herald.testing.fake_llm import FakeLLMServer, Reply
from herald.testing.homes import fake_model_config, make_home, merge

SRC = str(Path(__file__).resolve().parents[2] / "src")


async def test_relay_off_asks_no_client_and_the_allowlist_decides(tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / "scratch").mkdir(parents=True)
    with FakeLLMServer() as llm:
        config = merge(
            fake_model_config(llm),
            {"mcp": {"serve": {"relay_approvals": False, "allow": ["touch *"]}}},
        )
        make_home(tmp_path / "home", config)
        llm.enqueue(
            Reply.tool_call("terminal", {"command": "rm -r scratch"}),  # dangerous
            Reply.tool_call("terminal", {"command": "mkdir made"}),  # harmless, not allowed
            Reply.tool_call("terminal", {"command": "touch allowed.txt"}),  # mcp.serve.allow
            Reply.tool_call("terminal", {"command": "ls"}),  # read-only
            Reply.text("Done."),
        )
        asked: list[str] = []

        async def would_approve(context, params):  # a client that would say yes
            asked.append(params.message)
            return ElicitResult(action="accept", content={"decision": "once"})

        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "herald", "mcp", "serve"],
            env={"HERALD_HOME": str(tmp_path / "home"), "PYTHONPATH": SRC},
            cwd=str(work),
        )
        async with Client(params, elicitation_callback=would_approve) as client:
            result = await client.call_tool("agent_run", {"prompt": "tidy up"})
        data = json.loads(result.content[0].text)
        results = [m["content"] for m in llm.model_requests()[-1].messages if m["role"] == "tool"]
    assert asked == []  # nothing relayed to the client
    assert data["approvals"] == "unattended (denied)"
    rm, mkdir, touch, ls = results
    assert (work / "scratch").exists() and "Not run: `rm -r scratch`" in rm
    assert not (work / "made").exists() and "Not run: `mkdir made`" in mkdir
    assert "mcp.serve.allow: ['mkdir *']" in mkdir  # the key that would allow it
    assert (work / "allowed.txt").exists() and "Not run" not in touch
    assert "allowed.txt" in ls and "scratch" in ls
