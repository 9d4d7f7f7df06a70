"""Turn-engine overhead against the fake LLM server.

1. For each of `terminal` (`echo hi`), `read_file` and `todo`: one in-process turn
   of N tool iterations (+1 answer), wall time per iteration (model call over
   loopback HTTP + persistence + the tool). A tool that is not registered is
   skipped with a note.
2. The tools array the default CLI toolset sends: its size in bytes
   (`json.dumps` of the request's `tools`), per tool.
3. A cold `herald chat -q` subprocess with one tool call: whole-process wall time.

Run: python bench/turn_overhead.py [--iterations 20] [--runs 3]
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from herald.engine import Agent, AgentOptions, ExitReason
from herald.state import StateStore
from herald.testing.fake_llm import FakeLLMServer, Reply
from herald.testing.homes import fake_model_config, make_home
from herald.toolbox import builtin_tools
from herald.tools import ERROR_PREFIX

registry = builtin_tools()  # the bench's tools, as a surface composes them

# Tool modules that may not be imported by `herald.tools` yet; each self-registers.
OPTIONAL_TOOL_MODULES = (
    "herald.tools.terminal",
    "herald.tools.process",
    "herald.tools.file_tools",
    "herald.tools.search_files",
    "herald.tools.clarify",
    "herald.tools.web",
)

CallFactory = Callable[[int, Path], Reply]


def load_optional_tools() -> list[str]:
    missing = []
    for module in OPTIONAL_TOOL_MODULES:
        try:
            importlib.import_module(module)
        except ImportError as exc:
            missing.append(f"{module} ({exc})")
    return missing


def todo_call(i: int, _work: Path) -> Reply:
    return Reply.tool_call(
        "todo",
        {"todos": [{"id": str(i), "content": f"step {i}", "status": "in_progress"}], "merge": True},
    )


def terminal_call(_i: int, _work: Path) -> Reply:
    return Reply.tool_call("terminal", {"command": "echo hi"})


def read_file_call(i: int, work: Path) -> Reply:
    # A different window each time: identical reads would (rightly) trip the guardrail.
    return Reply.tool_call("read_file", {"path": str(work / "sample.txt"), "offset": i * 5 + 1})


SCENARIOS: dict[str, CallFactory] = {
    "terminal": terminal_call,
    "read_file": read_file_call,
    "todo": todo_call,
}


def _attach_environment(agent: Agent, work: Path) -> None:
    """The file tools need the session's environment; the surfaces will attach it."""
    if agent.tool_context.environment is not None:
        return
    try:
        from herald.environments import create_environment
    except ImportError:
        return
    agent.tool_context.environment = create_environment(
        agent.config, secrets=agent.secrets, cwd=str(work)
    )


def in_process_turn(
    server: FakeLLMServer, tool: str, make_call: CallFactory, iterations: int
) -> tuple[float, int, list[dict[str, Any]] | None]:
    """(seconds per iteration, error results, the tools array of the first request)."""
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "work"
        work.mkdir()
        (work / "sample.txt").write_text(
            "".join(f"line {n}: some text\n" for n in range(200)), encoding="utf-8"
        )
        settings = make_home(
            Path(tmp) / "home", fake_model_config(server, context_length=1_000_000)
        )
        store = StateStore(settings.home.state_db)
        options = AgentOptions(max_iterations=iterations + 5, cwd=str(work))
        agent = Agent.open(settings, store, source="cli", tools=registry, options=options)
        _attach_environment(agent, work)
        server.reset()
        server.enqueue(*[make_call(i, work) for i in range(iterations)], Reply.text("done"))
        started = time.perf_counter()
        result = agent.run_turn("work through the steps")
        elapsed = time.perf_counter() - started
        assert result.exit_reason is ExitReason.TEXT_RESPONSE, result
        assert result.api_calls == iterations + 1, (tool, result.api_calls, result.error)
        errors = sum(
            1
            for m in result.messages_added
            if m["role"] == "tool" and str(m.get("content", "")).startswith(ERROR_PREFIX)
        )
        tools = server.model_requests()[0].tools
        if agent.tool_context.environment is not None:
            agent.tool_context.environment.close()
        agent.close()
        store.close()
    return elapsed / (iterations + 1), errors, tools


def cold_cli_turn(server: FakeLLMServer) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        make_home(Path(tmp), fake_model_config(server, context_length=1_000_000))
        server.reset()
        server.enqueue(todo_call(0, Path(tmp)), Reply.text("done"))
        env = {**os.environ, "HERALD_HOME": tmp}
        started = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "herald", "chat", "-q", "one step"],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        elapsed = time.perf_counter() - started
        assert proc.returncode == 0 and proc.stdout.strip() == "done", proc.stderr
    return elapsed


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f}"


def report_tools_array(tools: list[dict[str, Any]] | None) -> None:
    tools = tools or []
    total = len(json.dumps(tools).encode("utf-8"))
    print(f"tools array, default CLI toolset (herald-cli): {len(tools)} tools, {total} bytes")
    for tool in tools:
        name = tool.get("function", {}).get("name", "?")
        print(f"  {name:<14} {len(json.dumps(tool).encode('utf-8')):>6} bytes")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-cold", action="store_true", help="skip the cold CLI subprocess")
    args = parser.parse_args()
    for note in load_optional_tools():
        print(f"note: could not import {note}")
    tools_array: list[dict[str, Any]] | None = None
    with FakeLLMServer() as server:
        in_process_turn(server, "todo", todo_call, 2)  # warm-up: SDK imports, first connection
        print(f"{args.iterations} tool iterations (+1 answer) per turn, {args.runs} runs each:")
        for tool, make_call in SCENARIOS.items():
            if registry.get(tool) is None:
                print(f"  {tool:<10} skipped: the tool is not registered yet")
                continue
            runs = [
                in_process_turn(server, tool, make_call, args.iterations) for _ in range(args.runs)
            ]
            per_iter = [r[0] for r in runs]
            errors = sum(r[1] for r in runs)
            tools_array = tools_array or runs[0][2]
            note = f", {errors} error results (!)" if errors else ""
            print(
                f"  {tool:<10} wall time per iteration: median {_ms(statistics.median(per_iter))} ms "
                f"(min {_ms(min(per_iter))}, max {_ms(max(per_iter))}){note}"
            )
        cold = [] if args.no_cold else [cold_cli_turn(server) for _ in range(args.runs)]
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"  peak RSS (this process): {peak_mb:.0f} MiB")
    report_tools_array(tools_array)
    if cold:
        print("cold `herald chat -q` with one tool call:")
        print(
            f"  wall time: median {statistics.median(cold):.2f} s "
            f"(min {min(cold):.2f}, max {max(cold):.2f})"
        )


if __name__ == "__main__":
    main()
