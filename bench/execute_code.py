"""A 20-file task done with direct tool calls vs one execute_code script, against the
fake LLM server (loopback HTTP, real processes).

The task: read 20 files and report which mention a word. Three ways:

- direct, one call per message: what a model does when each call depends on the last
  (21 model requests);
- direct, 20 calls in one message: the best case of parallel tool calls (2 requests,
  but all 20 results ride in the history of every later request);
- execute_code: one script makes the 20 calls and prints one line (2 requests).

Printed per way: model requests, characters of tool results the next request carries,
and wall time (median of --runs). ``--latency S`` makes the fake model take S seconds
per answer, as a real one does, so the round trips show in the wall time.

Run: python bench/execute_code.py [--files 20] [--runs 3] [--latency 0.5]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from herald.engine import Agent, AgentOptions, ExitReason, Humans
from herald.state import StateStore
from herald.testing.fake_llm import FakeLLMServer, Reply
from herald.testing.homes import fake_model_config, make_home
from herald.toolbox import builtin_tools


def script(files: int) -> str:
    return (
        "import herald_tools\n"
        "hits = []\n"
        f"for i in range({files}):\n"
        "    if 'needle' in herald_tools.read_file(path=f'file{i}.txt'):\n"
        "        hits.append(i)\n"
        "print('files with the word:', hits)\n"
    )


def replies(way: str, files: int, latency: float) -> list[Reply]:
    def read(i: int) -> dict[str, Any]:
        return {"name": "read_file", "arguments": {"path": f"file{i}.txt"}}

    if way == "direct-serial":
        steps = [Reply.tool_calls([read(i)]) for i in range(files)]
    elif way == "direct-batch":
        steps = [Reply.tool_calls([read(i) for i in range(files)])]
    else:
        steps = [Reply.tool_call("execute_code", {"code": script(files)})]
    return [r.replace(delay=latency) for r in [*steps, Reply.text("done")]]


def one_run(way: str, files: int, latency: float, root: Path) -> dict[str, float]:
    work = root / "work"
    work.mkdir(parents=True)
    for i in range(files):
        body = "filler line\n" * 40 + ("needle\n" if i % 3 == 0 else "")
        (work / f"file{i}.txt").write_text(body)
    with FakeLLMServer() as server:
        server.enqueue(*replies(way, files, latency))
        config = fake_model_config(server, context_length=128_000)
        config["toolsets"] = {"enabled": ["execute_code"]}
        # The script is approved by a human at the prompt in real use; here the
        # approval policy is off so only the machinery is timed.
        config["approvals"] = {"mode": "off"}
        settings = make_home(root / "home", config)
        store = StateStore(settings.home.state_db)
        agent = Agent.open(
            settings,
            store,
            source="cli",
            tools=builtin_tools(),
            options=AgentOptions(cwd=str(work)),
        )
        started = time.perf_counter()
        result = agent.start_turn("which files mention needle?", humans=Humans()).result(
            timeout=600
        )
        wall = time.perf_counter() - started
        agent.close()
        store.close()
        requests = server.model_requests()
    assert result.exit_reason is ExitReason.TEXT_RESPONSE, result.error
    carried = sum(len(str(m["content"])) for m in requests[-1].messages if m["role"] == "tool")
    return {"requests": len(requests), "carried": carried, "wall": wall}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds per model answer")
    args = parser.parse_args()
    print(f"{args.files} reads, {args.runs} runs, model latency {args.latency:.2f} s")
    print(f"{'way':<16} {'requests':>8} {'result chars':>13} {'wall (median)':>14}")
    walls: dict[str, float] = {}
    for way in ("direct-serial", "direct-batch", "execute_code"):
        rows = []
        for _ in range(args.runs):
            with tempfile.TemporaryDirectory(prefix="herald-bench-exec-") as tmp:
                rows.append(one_run(way, args.files, args.latency, Path(tmp)))
        walls[way] = statistics.median(r["wall"] for r in rows)
        print(
            f"{way:<16} {rows[0]['requests']:>8} {rows[0]['carried']:>13,} "
            f"{walls[way] * 1000:>11.0f} ms"
        )
    print(
        f"wall ratio direct-serial / execute_code: "
        f"{walls['direct-serial'] / walls['execute_code']:.2f}x; "
        f"direct-batch / execute_code: {walls['direct-batch'] / walls['execute_code']:.2f}x"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
