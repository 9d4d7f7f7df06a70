"""A long session under a small context window, against the fake LLM server.

Ten user turns of twenty tool iterations each (200 in all); every tool call is a
real `terminal` command whose output is ~8 KB, so the history outgrows a
32K-token window again and again. Prints the total prompt bytes sent, the number
of compressions, and for each request the fraction of its bytes that were a
byte-identical prefix of the previous request (what a provider's prompt cache
can reuse). The prompt is rendered in the order providers cache it: tools,
then system, then messages.

With --resume every turn runs in a new Agent that resumes the session (as a new
process would: the multi-turn scenario of issue 15); pruning of read tool output is
on by default, and --prune sets its line in tokens (with batch sizes to match); --tail sets
`context.tail_tokens` (how deep a compression cuts). `--deferred` prints the
bytes per request of the default CLI tools with and without deferred schemas.

`--big-file` is the scenario of issue 39: every turn reads one 300 KB file once
(`read_file` returns ~50 KB of it); with `--resume` and the default window it prints
compressions per turn, prompt bytes per turn, the bytes a prefix cache could not reuse
and how many compressions saved under 20 % (a compression should never save nothing).

Run: python bench/long_session.py [--turns 10] [--iterations 20] [--window 32000]
     [--resume] [--prune TOKENS] [--tail TOKENS] [--deferred] [--big-file]
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import statistics
import tempfile
import time
from pathlib import Path

from herald.context.compressor import SECTIONS
from herald.engine import Agent, AgentOptions, ExitReason, TurnCallbacks
from herald.state import StateStore
from herald.testing.fake_llm import FakeLLMServer, Reply
from herald.testing.homes import fake_model_config, make_home, merge
from herald.toolbox import builtin_tools


def is_summarizer(req) -> bool:
    return bool(req.system) and req.system.startswith("You compress the history")


def make_handler(iterations: int, read_file: str | None = None):
    state = {"round": 0, "n": 0}

    def handler(req):
        if is_summarizer(req):
            return Reply.text("\n\n".join(f"## {s}\nprogress noted for {s}" for s in SECTIONS))
        if req.messages[-1]["role"] == "user":
            state["round"] = 0
        if state["round"] < iterations:
            state["round"] += 1
            state["n"] += 1
            if read_file is not None:
                return Reply.tool_call("read_file", {"path": read_file})
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
    parser.add_argument("--resume", action="store_true", help="a new Agent per turn")
    parser.add_argument(
        "--prune", type=int, default=0, help="prune read tool output above N tokens"
    )
    parser.add_argument("--tail", type=int, default=3000, help="context.tail_tokens")
    parser.add_argument("--threshold", type=float, default=None, help="context.threshold")
    parser.add_argument("--target", type=float, default=None, help="context.target_fraction")
    parser.add_argument("--deferred", action="store_true", help="tools with/without deferral")
    parser.add_argument(
        "--big-file",
        action="store_true",
        help="each turn reads one 300 KB file once (read_file returns ~50 KB of it)",
    )
    args = parser.parse_args()
    if args.big_file:
        args.iterations = 1
    if args.deferred:
        deferred_bytes()
        return

    statuses: list[str] = []
    with FakeLLMServer() as server, tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "work"
        work.mkdir()
        big = None
        if args.big_file:
            big = work / "big.log"
            line = "2026-12-01T10:00:00 INFO worker-7 processed batch with id {:08d} " + "x" * 60
            big.write_text("\n".join(line.format(i) for i in range(2400)) + "\n")
        context: dict = {"tail_tokens": args.tail}
        if args.threshold is not None:
            context["threshold"] = args.threshold
        if args.target is not None:
            context["target_fraction"] = args.target
        if args.prune:
            context["prune"] = {
                "enabled": True,
                "above_tokens": args.prune,
                "min_reclaim_tokens": max(1000, args.prune // 8),
                "rearm_growth_tokens": max(2000, args.prune // 3),
            }
        config = merge(
            fake_model_config(server),
            {"model": {"context_length": args.window}, "context": context},
        )
        settings = make_home(Path(tmp) / "home", config)
        server.set_handler(make_handler(args.iterations, str(big) if big else None))
        store = StateStore(settings.home.state_db)

        def new_agent(session_id: str | None = None) -> Agent:
            return Agent.open(
                settings,
                store,
                session_id=session_id,
                source="cli",
                tools=builtin_tools(),
                options=AgentOptions(cwd=str(work), max_iterations=args.iterations + 5),
                callbacks=TurnCallbacks(on_status=statuses.append),
            )

        agent = new_agent()
        started = time.perf_counter()
        per_turn: list[list[str]] = []
        bytes_per_turn: list[int] = []
        for turn in range(args.turns):
            seen = len(statuses)
            sent = len(server.model_requests())
            if args.resume and turn > 0:
                sid = agent.session_id
                agent.close()
                agent = new_agent(sid)
            result = agent.run_turn(f"Part {turn + 1}: list the next numbers and check them.")
            assert result.exit_reason is ExitReason.TEXT_RESPONSE, result.error
            per_turn.append(statuses[seen:])
            bytes_per_turn.append(
                sum(len(r.raw) for r in server.model_requests()[sent:] if not is_summarizer(r))
            )
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
    mode = "resumed turns" if args.resume else "turns"
    levers = f"tail {args.tail:,}" + (f", prune above {args.prune:,}" if args.prune else "")
    if args.threshold is not None:
        levers += f", threshold {args.threshold}"
    if args.target is not None:
        levers += f", target {args.target}"
    print(
        f"session: {args.turns} {mode} x {args.iterations} tool iterations, "
        f"window {args.window:,} tokens ({levers})"
    )
    print(
        f"  model requests: {len(requests)} (+{len(summaries)} summarizer calls), {elapsed:.1f} s"
    )
    print(
        f"  total prompt bytes sent: {raw_total:,} (largest request {max(len(r.raw) for r in requests):,})"
    )
    print(f"  compressions: {len(compressions)}")
    savings = [int(m.group(1)) for s in compressions if (m := re.search(r"saved (-?\d+)%", s))]
    per_turn_counts = [
        sum(s.startswith("compressed the conversation") for s in statuses_of_turn)
        for statuses_of_turn in per_turn
    ]
    print(f"  compressions per turn: {per_turn_counts}")
    fresh = len(bodies[0]) + sum(len(cur) - n for n, cur in zip(shared, bodies[1:], strict=False))
    print(
        f"  rendered prompt bytes a prefix cache could not reuse: {fresh:,} of {sum(map(len, bodies)):,}"
    )
    print(f"  prompt bytes per turn: {bytes_per_turn}")
    print(
        f"  compressions that saved under 20%: {sum(1 for v in savings if v < 20)} "
        f"(savings: {savings})"
    )
    summary_bytes = sum(len(r.raw) for r in summaries)
    print(f"  summarizer request bytes: {summary_bytes:,} (main + summarizer: "
          f"{raw_total + summary_bytes:,})")  # fmt: skip
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


def deferred_bytes() -> None:
    """Bytes of one request (the CLI's default tools) with and without deferred schemas:
    the rarely used built-ins named below, as a user would list in toolsets.deferred."""
    rarely = ["cronjob", "process", "session_search", "skill_manage"]
    sizes = {}
    with FakeLLMServer() as server, tempfile.TemporaryDirectory() as tmp:
        for label, deferred in (("all schemas", []), ("deferred", rarely)):
            server.enqueue(Reply.text("hi"))
            config = merge(fake_model_config(server), {"toolsets": {"deferred": deferred}})
            settings = make_home(Path(tmp) / label.replace(" ", "-"), config)
            store = StateStore(settings.home.state_db)
            agent = Agent.open(
                settings, store, source="cli", tools=builtin_tools(), options=AgentOptions(cwd=tmp)
            )
            agent.run_turn("hello")
            request = server.model_requests()[-1]
            row = store.list_usage(agent.session_id)[-1]
            names = [t["function"]["name"] for t in request.tools]
            sizes[label] = (len(request.raw), row.tools_bytes, len(names))
            agent.close()
            store.close()
    for label, (raw, tools, count) in sizes.items():
        print(f"  {label:12} request {raw:,} bytes, of which tools {tools:,} ({count} tools)")
    print(f"  deferred: {', '.join(rarely)} (listed in tool_search)")
    print(f"  deferred/all request bytes: {sizes['deferred'][0] / sizes['all schemas'][0]:.2f}x")


if __name__ == "__main__":
    main()
