"""Turn-engine overhead against the fake LLM server.

1. A 20-iteration `todo` turn in-process: wall time per iteration (model call over
   loopback HTTP + persistence + tool), and peak RSS.
2. A cold `herald chat -q` subprocess with one tool call: whole-process wall time.

Run: python bench/turn_overhead.py [--iterations 20] [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from herald.engine import Agent, AgentOptions, ExitReason
from herald.state import StateStore
from herald.testing.fake_llm import FakeLLMServer, Reply
from herald.testing.homes import fake_model_config, make_home


def todo_call(i: int) -> Reply:
    return Reply.tool_call(
        "todo",
        {"todos": [{"id": str(i), "content": f"step {i}", "status": "in_progress"}], "merge": True},
    )


def in_process_turn(server: FakeLLMServer, iterations: int) -> float:
    """Seconds per iteration for one turn of `iterations` tool rounds + the answer."""
    with tempfile.TemporaryDirectory() as tmp:
        settings = make_home(Path(tmp), fake_model_config(server))
        store = StateStore(settings.home.state_db)
        agent = Agent.from_settings(settings, store, options=AgentOptions(max_turns=iterations + 5))
        server.reset()
        server.enqueue(*[todo_call(i) for i in range(iterations)], Reply.text("done"))
        started = time.perf_counter()
        result = agent.run_turn("work through the steps")
        elapsed = time.perf_counter() - started
        assert result.exit_reason is ExitReason.TEXT_RESPONSE, result
        assert result.api_calls == iterations + 1
        agent.close()
        store.close()
    return elapsed / (iterations + 1)


def cold_cli_turn(server: FakeLLMServer) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        make_home(Path(tmp), fake_model_config(server))
        server.reset()
        server.enqueue(todo_call(0), Reply.text("done"))
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with FakeLLMServer() as server:
        in_process_turn(server, 2)  # warm-up: SDK imports, first connection
        per_iter = [in_process_turn(server, args.iterations) for _ in range(args.runs)]
        cold = [cold_cli_turn(server) for _ in range(args.runs)]
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"todo turn, {args.iterations} iterations (+1 answer), {args.runs} runs:")
    print(f"  wall time per iteration: median {statistics.median(per_iter) * 1000:.1f} ms "
          f"(min {min(per_iter) * 1000:.1f}, max {max(per_iter) * 1000:.1f})")
    print(f"  peak RSS (this process): {peak_mb:.0f} MiB")
    print("cold `herald chat -q` with one tool call:")
    print(f"  wall time: median {statistics.median(cold):.2f} s "
          f"(min {min(cold):.2f}, max {max(cold):.2f})")


if __name__ == "__main__":
    main()
