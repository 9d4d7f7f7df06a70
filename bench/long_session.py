"""A long session under a small context window, against the fake LLM server.

Ten user turns of twenty tool iterations each (200 in all); every tool call is a
real `terminal` command whose output is ~8 KB, so the history outgrows a
32K-token window again and again. Prints the total prompt bytes sent, the number
of compressions, and for each request the fraction of its bytes that were a
byte-identical prefix of the previous request (what a provider's prompt cache
can reuse). The prompt is rendered in the order providers cache it: tools,
then system, then messages.

Run: python bench/long_session.py [--turns 10] [--iterations 20] [--window 32000]
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import tempfile
import time
from pathlib import Path

from herald.context.compressor import SECTIONS
from herald.engine import Agent, AgentOptions, ExitReason, TurnCallbacks
from herald.state import StateStore
from herald.testing.fake_llm import FakeLLMServer, Reply
from herald.testing.homes import fake_model_config, make_home, merge


def is_summarizer(req) -> bool:
    return bool(req.system) and req.system.startswith("You compress the history")


def make_handler(iterations: int):
    state = {"round": 0, "n": 0}

    def handler(req):
        if is_summarizer(req):
            return Reply.text("\n\n".join(f"## {s}\nprogress noted for {s}" for s in SECTIONS))
        if req.messages[-1]["role"] == "user":
            state["round"] = 0
        if state["round"] < iterations:
            state["round"] += 1
            state["n"] += 1
            start = state["n"] * 1000
            return Reply.tool_call("terminal", {"command": f"seq {start} {start + 1600}"})
        return Reply.text("Finished this part.")

    return handler


def rendered(req) -> bytes:
    body = req.body or {}
    parts = [json.dumps(body.get("tools") or [], sort_keys=True)]
    parts += [json.dumps(m, sort_keys=True) for m in body.get("messages", [])]
    return "\n".join(parts).encode()


def common_prefix(a: bytes, b: bytes) -> int:
    n = min(len(a), len(b))
    lo, hi = 0, n
    while lo < hi:  # binary search on equal prefixes (fast for long prompts)
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--window", type=int, default=32_000)
    args = parser.parse_args()

    statuses: list[str] = []
    with FakeLLMServer() as server, tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "work"
        work.mkdir()
        config = merge(
            fake_model_config(server),
            {"model": {"context_length": args.window}, "context": {"tail_tokens": 3000}},
        )
        settings = make_home(Path(tmp) / "home", config)
        server.set_handler(make_handler(args.iterations))
        store = StateStore(settings.home.state_db)
        agent = Agent.from_settings(
            settings,
            store,
            options=AgentOptions(cwd=str(work), max_turns=args.iterations + 5),
            callbacks=TurnCallbacks(on_status=statuses.append),
        )
        started = time.perf_counter()
        for turn in range(args.turns):
            result = agent.run_turn(f"Part {turn + 1}: list the next numbers and check them.")
            assert result.exit_reason is ExitReason.TEXT_RESPONSE, result.error
        elapsed = time.perf_counter() - started
        requests = [r for r in server.model_requests() if not is_summarizer(r)]
        summaries = [r for r in server.model_requests() if is_summarizer(r)]
        agent.close()
        store.close()

    bodies = [rendered(r) for r in requests]
    raw_total = sum(len(r.raw) for r in requests)
    shared = [common_prefix(prev, cur) for prev, cur in itertools.pairwise(bodies)]
    fractions = [n / len(cur) for n, cur in zip(shared, bodies[1:], strict=False)]
    # How much of the previous request was resent unchanged (100% = perfectly byte-stable).
    kept = [n / len(prev) for n, prev in zip(shared, bodies, strict=False)]
    steady = [k for k in kept if k > 0.99]
    compressions = [s for s in statuses if s.startswith("compressed the conversation")]
    print(f"session: {args.turns} turns x {args.iterations} tool iterations, window {args.window:,} tokens")
    print(f"  model requests: {len(requests)} (+{len(summaries)} summarizer calls), {elapsed:.1f} s")
    print(f"  total prompt bytes sent: {raw_total:,} (largest request {max(len(r.raw) for r in requests):,})")
    print(f"  compressions: {len(compressions)}")
    print(
        "  prefix reuse per request (byte-identical prefix of the previous request): "
        f"mean {statistics.mean(fractions):.1%}, median {statistics.median(fractions):.1%}, "
        f"min {min(fractions):.1%}"
    )
    print(
        f"  previous request resent byte-identical as this one's prefix: {len(steady)} of "
        f"{len(kept)} requests; the other {len(kept) - len(steady)} follow a compression "
        f"(mean share of the previous request kept there: "
        f"{statistics.mean([k for k in kept if k <= 0.99] or [0]):.1%})"
    )


if __name__ == "__main__":
    main()
