"""Load on the HTTP API adapter: N concurrent chats x M messages against the fake LLM.

Three processes, so the numbers are Herald's own: this one (the clients), a fake LLM
server (answers after a fixed delay, echoing the nonce of the message it answers) and
the Herald gateway (runner + API adapter on 127.0.0.1, a temporary home). Each chat is
a session (`user=chat-<i>`) sending its messages one after another; all chats run at
once. Printed: total time, throughput, p50/p95 reply latency and the part Herald adds
(latency minus the model's delay; also against a direct call to the fake LLM at the
same concurrency), the gateway's peak RSS, and PASS/FAIL checks: no reply lost, none
duplicated, each reply answering its own message, and every session's stored history
holding each message exactly once. Exits 1 on any FAIL.

Run: python bench/gateway_load.py [--chats 50] [--messages 20] [--model-delay 0.02]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import resource
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

API_KEY = "bench-api-key-0123456789abcdef"
NONCE_RE = re.compile(r"nonce=([0-9a-f]{32})")


# ---- child: the fake LLM ------------------------------------------------------------------


def serve_fake_llm(delay: float) -> int:
    from herald.testing.fake_llm import FakeLLMServer, Reply

    def answer(request: Any) -> Reply | None:
        found = NONCE_RE.search(request.last_user_text or "")
        if found is None:  # background review and other side calls: the default reply
            return None
        return Reply.text(f"ack nonce={found.group(1)}", delay=delay)

    with FakeLLMServer() as server:
        server.set_handler(answer)
        print(server.openai_base_url, flush=True)
        sys.stdin.read()  # until the parent closes our stdin
        print(json.dumps({"model_calls": len(server.model_requests())}), flush=True)
    return 0


# ---- child: the Herald gateway ------------------------------------------------------------


async def gateway_main(
    home: Path, llm_url: str, workers: int | None, max_agents: int | None
) -> None:
    """The gateway as `herald gateway run` builds it: adapters from config through the
    lifecycle's `load_adapters`, one `GatewayRunner`."""
    from herald.gateway.lifecycle import load_adapters
    from herald.gateway.runner import GatewayRunner
    from herald.testing.homes import fake_model_config, make_home, merge

    class _Url:  # fake_model_config wants a server object
        openai_base_url = llm_url

    gateway: dict[str, Any] = {
        "cwd": str(home.parent),
        "platforms": {"api": {"enabled": True, "port": 0, "api_key": API_KEY}},
    }
    if workers is not None:
        gateway["max_concurrent_turns"] = workers
    if max_agents is not None:
        gateway["max_agents"] = max_agents
    settings = make_home(home, merge(fake_model_config(_Url()), {"gateway": gateway}))
    adapters, problems = load_adapters(settings)
    if problems:
        raise SystemExit(f"gateway cannot start: {problems}")
    runner = GatewayRunner({"default": settings}, adapters)
    (adapter,) = adapters
    await adapter.connect(runner)
    config = runner.config
    hello = {
        "port": adapter.port,
        "workers": config.max_concurrent_turns,
        "agents": config.max_agents,
    }
    print(json.dumps(hello), flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    await runner.shutdown(10)
    await adapter.disconnect()
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"peak_rss_kb": peak_kb}), flush=True)


# ---- parent: the clients ------------------------------------------------------------------


@dataclass
class Outcome:
    latencies: list[float] = field(default_factory=list)
    nonces_sent: list[str] = field(default_factory=list)
    nonces_received: list[str] = field(default_factory=list)
    mismatched: int = 0
    errors: Counter[str] = field(default_factory=Counter)


def spawn(*args: str) -> tuple[subprocess.Popen[str], str]:
    child = subprocess.Popen(
        [sys.executable, __file__, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert child.stdout is not None
    first = child.stdout.readline().strip()
    if not first:
        child.kill()
        raise SystemExit(f"child {args[:2]} did not start")
    return child, first


def finish(child: subprocess.Popen[str]) -> dict[str, Any]:
    assert child.stdin is not None and child.stdout is not None
    child.stdin.close()
    last = child.stdout.read().strip().splitlines()
    child.wait(60)
    return json.loads(last[-1]) if last else {}


async def drive(url: str, chats: int, messages: int, *, direct: bool) -> tuple[Outcome, float]:
    import httpx

    outcome = Outcome()
    limits = httpx.Limits(max_connections=chats + 8, max_keepalive_connections=chats + 8)
    headers = {"Authorization": f"Bearer {API_KEY}"}
    async with httpx.AsyncClient(
        base_url=url, limits=limits, headers=headers, timeout=120
    ) as client:

        async def chat(index: int) -> None:
            for number in range(messages):
                nonce = uuid.uuid4().hex
                outcome.nonces_sent.append(nonce)
                body = {
                    "model": "fake-gpt" if direct else "herald",
                    "user": f"chat-{index}",
                    "messages": [
                        {"role": "user", "content": f"chat {index} message {number} nonce={nonce}"}
                    ],
                }
                started = time.perf_counter()
                try:
                    response = await client.post("/chat/completions", json=body)
                except httpx.HTTPError as exc:
                    outcome.errors[type(exc).__name__] += 1
                    continue
                outcome.latencies.append(time.perf_counter() - started)
                if response.status_code != 200:
                    outcome.errors[f"HTTP {response.status_code}"] += 1
                    continue
                found = NONCE_RE.search(response.json()["choices"][0]["message"]["content"] or "")
                if found is None:
                    outcome.errors["reply without a nonce"] += 1
                    continue
                outcome.nonces_received.append(found.group(1))
                if found.group(1) != nonce:
                    outcome.mismatched += 1

        started = time.perf_counter()
        await asyncio.gather(*(chat(i) for i in range(chats)))
        return outcome, time.perf_counter() - started


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def stored_history_check(home: Path, chats: int, sent: set[str]) -> tuple[bool, str]:
    """Every session holds each of its messages once, and each reply once."""
    from herald.state import StateStore

    with StateStore(home / "state.db") as store:
        sessions = store.list_sessions(limit=chats * 10, source="api")
        user_nonces: Counter[str] = Counter()
        reply_nonces: Counter[str] = Counter()
        for record in sessions:
            for message in store.get_messages(record.id):
                found = NONCE_RE.search(message.content or "")
                if found is None:
                    continue
                if message.role == "user":
                    user_nonces[found.group(1)] += 1
                elif message.role == "assistant":
                    reply_nonces[found.group(1)] += 1
    problems = []
    if len(sessions) != chats:
        problems.append(f"{len(sessions)} api sessions, expected {chats}")
    missing = sent - set(user_nonces)
    doubled = [n for n in sent if user_nonces[n] > 1 or reply_nonces[n] > 1]
    if missing:
        problems.append(f"{len(missing)} messages missing from the history")
    if doubled:
        problems.append(f"{len(doubled)} messages or replies stored twice")
    if set(reply_nonces) != set(user_nonces):
        problems.append("stored replies do not match stored messages one to one")
    return (not problems, "; ".join(problems) or f"{len(sessions)} sessions, each message once")


def run_bench(args: argparse.Namespace) -> int:
    total = args.chats * args.messages
    llm, llm_url = spawn("--role", "fake-llm", "--model-delay", str(args.model_delay))
    checks: list[tuple[str, bool, str]] = []
    try:
        baseline, _ = asyncio.run(drive(llm_url, args.chats, args.messages, direct=True))
        with tempfile.TemporaryDirectory(prefix="herald-bench-") as tmp:
            home = Path(tmp) / "home"
            extra = ["--workers", str(args.workers)] if args.workers else []
            extra += ["--max-agents", str(args.max_agents)] if args.max_agents else []
            gateway, hello = spawn(
                "--role", "gateway", "--home", str(home), "--llm-url", llm_url, *extra
            )
            info = json.loads(hello)
            try:
                outcome, elapsed = asyncio.run(
                    drive(
                        f"http://127.0.0.1:{info['port']}/v1",
                        args.chats,
                        args.messages,
                        direct=False,
                    )
                )
            finally:
                gateway_stats = finish(gateway)
            history_ok, history_note = stored_history_check(
                home, args.chats, set(outcome.nonces_sent)
            )
    finally:
        llm_stats = finish(llm)

    received = Counter(outcome.nonces_received)
    lost = total - len(outcome.nonces_received)
    duplicated = sum(count - 1 for count in received.values() if count > 1)
    lat_ms = [value * 1000 for value in outcome.latencies]
    base_ms = [value * 1000 for value in baseline.latencies]
    delay_ms = args.model_delay * 1000
    added = [value - delay_ms for value in lat_ms]

    print(
        f"gateway load: {args.chats} chats x {args.messages} messages = {total} replies, "
        f"fake model delay {delay_ms:.0f} ms, GatewayRunner with "
        f"max_concurrent_turns={info['workers']} max_agents={info['agents']}"
    )
    print(f"total time            {elapsed:8.2f} s")
    print(f"throughput            {len(outcome.nonces_received) / elapsed:8.1f} replies/s")
    print(
        f"reply latency         p50 {percentile(lat_ms, 0.5):7.1f} ms   "
        f"p95 {percentile(lat_ms, 0.95):7.1f} ms"
    )
    print(
        f"added by Herald       p50 {percentile(added, 0.5):7.1f} ms   "
        f"p95 {percentile(added, 0.95):7.1f} ms   (latency - model delay)"
    )
    print(
        f"direct fake-LLM call  p50 {percentile(base_ms, 0.5):7.1f} ms   "
        f"p95 {percentile(base_ms, 0.95):7.1f} ms   (same concurrency, no Herald)"
    )
    print(
        f"Herald vs direct      p50 x{percentile(lat_ms, 0.5) / percentile(base_ms, 0.5):.2f}   "
        f"p95 x{percentile(lat_ms, 0.95) / percentile(base_ms, 0.95):.2f}"
    )
    print(f"gateway peak RSS      {gateway_stats.get('peak_rss_kb', 0) / 1024:8.1f} MiB")
    print(
        f"fake LLM calls        {llm_stats.get('model_calls', 0) - total} from Herald "
        f"(+ {total} direct baseline calls)"
    )
    if outcome.errors:
        print("errors                " + ", ".join(f"{k}: {v}" for k, v in outcome.errors.items()))
    checks.append(("zero lost replies", lost == 0, f"lost {lost}"))
    checks.append(("zero duplicated replies", duplicated == 0, f"duplicated {duplicated}"))
    checks.append(
        (
            "every reply answers its own message",
            outcome.mismatched == 0,
            f"mismatched {outcome.mismatched}",
        )
    )
    checks.append(("stored history exact", history_ok, history_note))
    failed = False
    for name, ok, note in checks:
        print(f"{'PASS' if ok else 'FAIL'}  {name} ({note})")
        failed |= not ok
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chats", type=int, default=50)
    parser.add_argument("--messages", type=int, default=20)
    parser.add_argument("--model-delay", type=float, default=0.02, help="seconds per model call")
    parser.add_argument(
        "--workers",
        type=int,
        help="gateway.max_concurrent_turns (default: the config default)",
    )
    parser.add_argument(
        "--max-agents", type=int, help="gateway.max_agents (default: the config default)"
    )
    parser.add_argument(
        "--role", choices=["bench", "fake-llm", "gateway"], default="bench", help=argparse.SUPPRESS
    )
    parser.add_argument("--home", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--llm-url", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.role == "fake-llm":
        return serve_fake_llm(args.model_delay)
    if args.role == "gateway":
        asyncio.run(gateway_main(args.home, args.llm_url, args.workers, args.max_agents))
        return 0
    return run_bench(args)


if __name__ == "__main__":
    sys.exit(main())
