"""Delegation overhead against the fake LLM server (in process, loopback HTTP).

For 1 child and for N concurrent children (default 10), in fresh and in fork mode:
the time from the parent's delegate_task call reaching the tool (the fake server
answering the parent's request) to each child's first model request arriving —
the cost of spawning (a session, its prompt or seed, a model client, a thread).
Printed per run: median and worst time to first request, the whole call's wall
time, and the per-child cost relative to one child (ratio).

Run: python bench/delegation.py [--children 10] [--runs 3]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from herald.delegation.runner import CHILD_SYSTEM
from herald.engine import Agent, AgentOptions, ExitReason
from herald.state import StateStore
from herald.testing.fake_llm import FakeLLMServer, Reply
from herald.testing.homes import fake_model_config, make_home
from herald.toolbox import builtin_tools

DIRECTIVE = "[Herald: you are sub-agent"


def is_child(request: Any) -> bool:
    return CHILD_SYSTEM in (request.system or "") or (request.last_user_text or "").startswith(
        DIRECTIVE
    )


def one_run(children: int, mode: str, root: Path) -> dict[str, float]:
    called: list[float] = []
    firsts: dict[str, float] = {}
    lock = threading.Lock()

    def answer(request: Any) -> Reply | None:
        now = time.perf_counter()
        if not is_child(request):
            if not any(m.get("role") == "tool" for m in request.messages):
                called.append(now)
                tasks = [{"goal": f"task {i}"} for i in range(children)]
                return Reply.tool_call("delegate_task", {"mode": mode, "tasks": tasks})
            return Reply.text("merged")
        key = request.last_user_text or ""
        with lock:
            firsts.setdefault(key, now)
        return Reply.text("child done")

    with FakeLLMServer() as server:
        server.set_handler(answer)
        config = fake_model_config(server, context_length=128_000)
        config["delegation"] = {"max_concurrent": max(children, 1)}
        settings = make_home(root, config)
        store = StateStore(settings.home.state_db)
        work = root / "work"
        work.mkdir(exist_ok=True)
        agent = Agent.open(
            settings,
            store,
            source="cli",
            tools=builtin_tools(),
            options=AgentOptions(cwd=str(work)),
        )
        started = time.perf_counter()
        result = agent.start_turn("fan out").result(timeout=300)
        wall = time.perf_counter() - started
        agent.close()
        store.close()
    assert result.exit_reason is ExitReason.TEXT_RESPONSE, result.error
    assert len(firsts) == children, f"{len(firsts)} of {children} children asked the model"
    delays = sorted(t - called[0] for t in firsts.values())
    return {"median": statistics.median(delays), "worst": delays[-1], "wall": wall}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--children", type=int, default=10)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="herald-bench-delegation-") as tmp:
        for mode in ("fresh", "fork"):
            rows = {}
            for n in (1, args.children):
                runs = [one_run(n, mode, Path(tmp) / f"{mode}-{n}-{i}") for i in range(args.runs)]
                rows[n] = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
            one, many = rows[1], rows[args.children]
            print(f"mode {mode}:")
            for n, row in rows.items():
                print(
                    f"  {n:>3} child{'ren' if n > 1 else '   '}: first request after "
                    f"{row['median'] * 1000:7.1f} ms median, {row['worst'] * 1000:7.1f} ms worst; "
                    f"call wall {row['wall'] * 1000:7.1f} ms"
                )
            print(
                f"  worst first request with {args.children} vs 1: "
                f"{many['worst'] / one['worst']:.2f}x (per child "
                f"{many['worst'] / one['worst'] / args.children:.2f}x of a lone child)"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
