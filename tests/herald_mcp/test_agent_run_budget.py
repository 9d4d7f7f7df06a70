"""`agent_run`'s `max_cost_usd`, driven by the SDK's own client over stdio: the call
that would cross the budget is never sent (the engine's pre-call gate), and the
result says the budget ran out."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from mcp import Client, StdioServerParameters

from herald.testing.fake_llm import FakeLLMServer, FakeUsage, Reply
from herald.testing.homes import fake_model_config, make_home

SRC = str(Path(__file__).resolve().parents[2] / "src")
# Output costs $1000 per million tokens and every call is assumed to produce 1000, so
# each call is estimated at $1 before it is made and costs $1 when it reports 1000.
DOLLAR = FakeUsage(prompt_tokens=100, completion_tokens=1000)


async def test_max_cost_usd_refuses_the_call_that_would_cross_it(tmp_path):
    with FakeLLMServer() as llm:
        config = fake_model_config(
            llm, pricing={"input_per_mtok": 0, "output_per_mtok": 1000}, context_length=1_000_000
        )
        config["budget"] = {"output_estimate_tokens": 1000}
        make_home(tmp_path / "home", config)
        (tmp_path / "work").mkdir()
        llm.enqueue(
            Reply.tool_call(
                "todo", {"todos": [{"id": "1", "content": "a", "status": "pending"}]}, usage=DOLLAR
            ),
            Reply.tool_call(
                "todo", {"todos": [{"id": "2", "content": "b", "status": "pending"}]}, usage=DOLLAR
            ),
            Reply.text("done", usage=DOLLAR),
        )
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "herald", "mcp", "serve"],
            env={"HERALD_HOME": str(tmp_path / "home"), "PYTHONPATH": SRC},
            cwd=str(tmp_path / "work"),
        )
        async with Client(params) as client:
            result = await client.call_tool(
                "agent_run", {"prompt": "plan two things", "max_cost_usd": 1.5}
            )
        data = json.loads(result.content[0].text)
        assert data["exit_reason"] == "cost_budget_exhausted", data
        # $1 spent; the next call's $1 estimate would pass $1.50, so it was never sent.
        assert len(llm.model_requests()) == 1
        assert data["estimated_cost_usd"] <= 1.5
        assert "max_cost_usd ($1.50)" in data["error"] and "session_id" in data["error"]
