"""The gateway's served surfaces under hostile input (issue 30), measured from outside.

Two processes: this one (the attacker) and the gateway (runner + web chat + HTTP API
on 127.0.0.1, a temporary home, the fake LLM inside it). Printed:

1. memory: the gateway's RSS before and after bodies of 300 MB at POST /login (declared
   by Content-Length, and chunked without one) and 200 MB at an authenticated JSON
   route, streamed from a generator (never held here), also 4 at once; and how many
   body bytes were sent before the gateway answered.
2. latency: a static page's median and p95 latency idle and during a login flood
   (8 threads, X-Forwarded-For spoofed), and the ratio (target: within 3x).
3. fuzz (--fuzz N): N random hostile requests split between the web routes (a stranger
   and a logged-in browser) and the API's OpenAPI operations; the count of 5xx answers
   and of tracebacks in the gateway's log (target: none).

Run: python bench/served_hostile.py [--fuzz 10000] [--flood-seconds 6] [--seed 30]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

API_KEY = "bench-api-key-0123456789abcdef"
MIB = 1024 * 1024


# ---- child: the gateway ---------------------------------------------------------------


async def gateway_main(home: Path, log_path: Path) -> None:
    from herald.gateway.lifecycle import load_adapters
    from herald.gateway.platforms.web import create_token
    from herald.gateway.runner import GatewayRunner
    from herald.testing.fake_llm import FakeLLMServer
    from herald.testing.homes import fake_model_config, make_home, merge

    logging.basicConfig(filename=log_path, level=logging.WARNING)
    llm = FakeLLMServer()
    llm.start()
    platforms = {
        "web": {"enabled": True, "port": 0},
        "api": {"enabled": True, "port": 0, "api_key": API_KEY},
    }
    gateway = {"cwd": str(home.parent), "platforms": platforms}
    settings = make_home(home, merge(fake_model_config(llm), {"gateway": gateway}))
    token = create_token(settings.home.root)
    adapters, problems = load_adapters(settings)
    if problems:
        raise SystemExit(f"gateway cannot start: {problems}")
    runner = GatewayRunner({"default": settings}, adapters)
    ports = {}
    for adapter in adapters:
        await adapter.connect(runner)
        ports[adapter.name] = adapter.port
    print(json.dumps({"ports": ports, "token": token}), flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    await runner.shutdown(5)
    for adapter in adapters:
        await adapter.disconnect()
    llm.stop()


# ---- parent: the attacker -------------------------------------------------------------


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def login_cookie(web: str, token: str) -> tuple[str, str]:
    import httpx

    response = httpx.post(f"{web}/login", json={"token": token}, timeout=30)
    response.raise_for_status()
    cookie = "; ".join(f"{k}={v}" for k, v in response.cookies.items())
    return cookie, response.json()["csrf"]


def memory_part(pid: int, port: int, cookie: str, csrf: str) -> None:
    from herald.testing.raw_http import chunked, send_until_answered, status_of

    auth = f"Cookie: {cookie}\r\nX-CSRF-Token: {csrf}\r\n"
    cases = [
        ("login, Content-Length 300 MB", "/login", "", f"Content-Length: {300 * MIB}\r\n", 300),
        ("login, chunked 300 MB", "/login", "", "Transfer-Encoding: chunked\r\n", 300),
        ("JSON route, Content-Length 200 MB", "/api/chats/chat-0123456789/messages", auth,
         f"Content-Length: {200 * MIB}\r\n", 200),
        ("JSON route, chunked 200 MB", "/api/chats/chat-0123456789/messages", auth,
         "Transfer-Encoding: chunked\r\n", 200),
    ]  # fmt: skip
    print("\n1. memory (gateway RSS, MB)")
    print(f"{'case':<36} {'before':>7} {'after':>7} {'growth':>7} {'sent MB':>8} {'status':>6}")

    def one(path: str, extra: str, length: str, size_mb: int) -> tuple[int, int]:
        head = f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{extra}{length}\r\n"
        body = chunked(size_mb * MIB) if "chunked" in length else _raw_pieces(size_mb * MIB)
        answer, sent = send_until_answered(port, head, body)
        return status_of(answer), sent

    for label, path, extra, length, size in cases:
        before = rss_mb(pid)
        status, sent = one(path, extra, length, size)
        after = rss_mb(pid)
        print(f"{label:<36} {before:>7.1f} {after:>7.1f} {after - before:>7.1f}"
              f" {sent / MIB:>8.2f} {status:>6}")  # fmt: skip
    before = rss_mb(pid)
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda c: one(c[1], c[2], c[3], c[4]), cases))
    after = rss_mb(pid)
    statuses = ",".join(str(s) for s, _ in results)
    print(f"{'all four at once':<36} {before:>7.1f} {after:>7.1f} {after - before:>7.1f}"
          f" {sum(s for _, s in results) / MIB:>8.2f} {statuses:>6}")  # fmt: skip


def _raw_pieces(total: int, size: int = 64 * 1024):  # type: ignore[no-untyped-def]
    piece = b"a" * size
    for _ in range(total // size):
        yield piece


def latency_part(web: str, flood_seconds: float) -> None:
    import httpx

    def sample(client: httpx.Client, count: int) -> list[float]:
        out = []
        for _ in range(count):
            started = time.perf_counter()
            client.get(f"{web}/static/markdown.js").raise_for_status()
            out.append(time.perf_counter() - started)
        return out

    with httpx.Client(timeout=30) as client:
        sample(client, 5)
        idle = sample(client, 60)
        stop = threading.Event()
        attempts = Counter[int]()

        def flood(n: int) -> None:
            with httpx.Client(timeout=30) as attacker:
                i = 0
                while not stop.is_set():
                    i += 1
                    response = attacker.post(
                        f"{web}/login",
                        json={"token": f"guess-{n}-{i}"},
                        headers={"X-Forwarded-For": f"10.{n}.{i % 250}.{i % 7}"},
                    )
                    attempts[response.status_code] += 1

        threads = [threading.Thread(target=flood, args=(n,), daemon=True) for n in range(8)]
        for t in threads:
            t.start()
        time.sleep(0.5)
        flooded: list[float] = []
        deadline = time.monotonic() + flood_seconds
        while time.monotonic() < deadline:
            flooded += sample(client, 10)
        stop.set()
        for t in threads:
            t.join(30)

    def p95(values: list[float]) -> float:
        return sorted(values)[int(len(values) * 0.95) - 1]

    print("\n2. latency of a static page (ms)")
    print(f"idle:   median {statistics.median(idle) * 1e3:.1f}  p95 {p95(idle) * 1e3:.1f}")
    print(f"flood:  median {statistics.median(flooded) * 1e3:.1f}  p95 {p95(flooded) * 1e3:.1f}"
          f"  ({len(flooded)} samples)")  # fmt: skip
    ratio = statistics.median(flooded) / statistics.median(idle)
    print(f"ratio (median): {ratio:.2f}x (target within 3x)")
    print(f"flood answers: {dict(attempts)}")


async def fuzz_part(ports: dict[str, int], token: str, count: int, seed: int, log: Path) -> None:
    import httpx

    from herald.testing.hostile_requests import (
        api_request,
        openapi_operations,
        send,
        web_request,
    )

    rng = random.Random(seed)
    statuses: Counter[int] = Counter()
    fivexx: list[str] = []
    web = f"http://127.0.0.1:{ports['web']}"
    api = f"http://127.0.0.1:{ports['api']}"
    started = time.perf_counter()
    async with (
        httpx.AsyncClient(base_url=web, timeout=60) as browser,
        httpx.AsyncClient(base_url=web, timeout=60) as stranger,
        httpx.AsyncClient(base_url=api, timeout=60, headers={"Authorization": f"Bearer {API_KEY}"}) as client,
    ):  # fmt: skip

        async def log_in() -> str | None:
            answer = await browser.post("/login", json={"token": token})
            return answer.json()["csrf"] if answer.status_code == 200 else None

        csrf = await log_in()
        logged_in = 0
        operations = openapi_operations((await client.get("/openapi.json")).json())
        for index in range(count):
            kind = index % 3
            if kind == 2:
                request = api_request(rng, operations)
                who = client
            else:
                request = web_request(rng, csrf if kind == 0 else None)
                who = browser if kind == 0 else stranger
            try:
                status, text = await send(who, request)
            except httpx.HTTPError as exc:
                statuses[0] += 1
                fivexx.append(f"#{index} {request.method} {request.path}: {exc!r}")
                continue
            statuses[status] += 1
            if status >= 500:
                fivexx.append(f"#{index} {request.method} {request.path}: {text[:200]}")
            if kind == 0 and csrf:
                logged_in += 1
            # A random /logout ends the browser's session; logging in again may have to
            # wait for the throttle the strangers' guesses tripped, so retry now and then.
            if kind == 0 and (status == 401 or (not csrf and index % 300 == 0)):
                csrf = await log_in()
    elapsed = time.perf_counter() - started
    text = log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""
    print(f"\n3. fuzz: {count} requests in {elapsed:.0f} s ({count / elapsed:.0f}/s), seed {seed}")
    print(f"statuses: {dict(sorted(statuses.items()))}")
    print(f"web requests sent by a logged-in browser: {logged_in}")
    print(f"5xx or failed: {len(fivexx)}; tracebacks in the gateway log: {text.count('Traceback')}")
    for line in fivexx[:10]:
        print("  ", line)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child-gateway":
        asyncio.run(gateway_main(Path(sys.argv[2]), Path(sys.argv[3])))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fuzz", type=int, default=0, help="random requests to send")
    parser.add_argument("--flood-seconds", type=float, default=6.0)
    parser.add_argument("--seed", type=int, default=30)
    parser.add_argument("--skip", default="", help="comma list of parts to skip: memory,latency")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="herald-bench-hostile-") as tmp:
        home, log = Path(tmp) / "home", Path(tmp) / "gateway.log"
        child = subprocess.Popen(
            [sys.executable, __file__, "--child-gateway", str(home), str(log)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert child.stdout is not None and child.stdin is not None
        hello: dict[str, Any] = json.loads(child.stdout.readline())
        ports, token = hello["ports"], hello["token"]
        web = f"http://127.0.0.1:{ports['web']}"
        try:
            cookie, csrf = login_cookie(web, token)
            if "memory" not in args.skip:
                memory_part(child.pid, ports["web"], cookie, csrf)
            if args.fuzz:  # before the flood, which locks the owner's address out for a minute
                asyncio.run(fuzz_part(ports, token, args.fuzz, args.seed, log))
            if "latency" not in args.skip:
                latency_part(web, args.flood_seconds)
        finally:
            child.stdin.close()
            child.wait(60)


if __name__ == "__main__":
    main()
