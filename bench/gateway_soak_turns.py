"""Gateway soak by turns (`gateway_soak.py --turns N`): does one long-lived gateway stay flat?

One `herald gateway run` subprocess on a temporary home, so what is measured is that
process alone (read from /proc/<pid>): the fake LLM and the fake Telegram server run
in this process. 50 chats, half on the HTTP API (`user=soak-<i>`, httpx) and half on
fake Telegram, each writing one message at a time. The fake model answers every
message with one tool call (`todo`, with a long item so the history grows) and then
the text ``echo <word>``; the window is small, so the sessions compress over and over.

The run goes in rounds of 100 turns: 99 chat turns (two per chat, at once across the
chats) and one session resume (an API session posted to through
``/v1/sessions/{id}/messages``, which builds an agent on the stored session). After
each round, with no turn running, it samples the gateway's RSS, open descriptors,
threads, the size of ``state.db-wal``, the live agents (from the status file) and the
connections the fake Telegram server and the fake model see open from it.

``--json`` prints ``{"turns", "rss_growth", "fd_growth", "thread_growth",
"wal_growth", "samples", ...}``; growths are fractions from the sample at turn 500 (or
the first, in shorter runs) to the last.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROUND = 100
CHATS = 50
WORD_RE = re.compile(r"WORD-[0-9a-z-]+")
PAD = "long note " * 120  # ~1.2 kB per tool call: the history grows towards compression


@dataclass
class Sample:
    turns: int
    seconds: float
    rss_kb: int
    fds: int
    threads: int
    wal_bytes: int
    live_agents: int | None
    telegram_sockets: int = 0  # the gateway's connections open to fake Telegram
    model_sockets: int = 0  # and to the fake model


@dataclass
class SoakReport:
    turns: int = 0
    answered: int = 0
    lost: int = 0
    resumes: int = 0
    compressions: int = 0
    model_calls: int = 0
    seconds: float = 0.0
    ms_per_turn: float = 0.0
    baseline_turn: int = 0
    rss_growth: float = 0.0
    fd_growth: float = 0.0
    thread_growth: float = 0.0
    wal_growth: float = 0.0
    live_agents_max: int = 0
    misses: list[str] = field(default_factory=list)  # the first few lost turns, and why
    heap_growth: list[str] = field(default_factory=list)  # --tracemalloc: where it grew
    samples: list[Sample] = field(default_factory=list)


# ---- the fake model ------------------------------------------------------------------------


def is_summarizer(request: Any) -> bool:
    return bool(request.system) and request.system.startswith("You compress the history")


class Script:
    """Each user message: one `todo` call, then ``echo <word>``; summaries on request."""

    def __init__(self) -> None:
        from herald.context.compressor import SECTIONS

        self.summary = "\n\n".join(f"## {s}\nsummary of {s}" for s in SECTIONS)
        self.compressions = 0
        self.calls = 0

    def __call__(self, request: Any) -> Any:
        from herald.testing.fake_llm import Reply

        self.calls += 1
        if is_summarizer(request):
            self.compressions += 1
            return Reply.text(self.summary)
        if not request.tools:  # titles and other side calls
            return Reply.text("soak")
        found = WORD_RE.findall(request.last_user_text or "")
        word = found[-1] if found else "none"
        last = request.messages[-1] if request.messages else {}
        if last.get("role") == "user":
            item = {"id": word, "content": f"{word} {PAD}", "status": "completed"}
            return Reply.tool_call("todo", {"todos": [item]})
        return Reply.text(f"echo {word}")


# ---- the gateway process -------------------------------------------------------------------


def proc_sample(pid: int) -> tuple[int, int, int]:
    """RSS (kB), open descriptors and threads of `pid`, from /proc."""
    rss = threads = 0
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
            elif line.startswith("Threads:"):
                threads = int(line.split()[1])
    return rss, len(os.listdir(f"/proc/{pid}/fd")), threads


def write_home(root: Path, llm: Any, telegram: Any, api_port: int, api_key: str, args: Any) -> Any:
    from herald.testing.homes import fake_model_config, make_home, merge

    tg_users = [str(7000 + i) for i in range(CHATS // 2)]
    config = merge(
        fake_model_config(llm, context_length=args.window),
        {
            "context": {"output_reserve_tokens": 500, "tail_tokens": 1200},
            "gateway": {
                "cwd": str(root.parent),
                "busy_mode": "queue",
                "status_edit_interval": 0.0,
                "drain_seconds": 5.0,
                "max_concurrent_turns": 8,
                "agent_idle_seconds": args.idle_seconds,
                "max_agents": args.max_agents,
                "watchdog": {"check_every": 0.5},
                "platforms": {
                    "api": {"enabled": True, "port": api_port, "api_key": api_key},
                    "telegram": {
                        "enabled": True,
                        "token": "${TELEGRAM_BOT_TOKEN}",
                        "base_url": telegram.base_url,
                        "allowed_users": tg_users,
                        "poll_timeout": 2,
                    },
                },
            },
        },
    )
    make_home(root, config, {"TELEGRAM_BOT_TOKEN": telegram.token})
    return tg_users


class TelegramReplies:
    """Watches everything the bot sent and wakes the chat waiting for a word."""

    def __init__(self, server: Any) -> None:
        self.server = server
        self.cursor = 0
        self.waiting: dict[str, asyncio.Future[None]] = {}

    def expect(self, word: str) -> asyncio.Future[None]:
        future = asyncio.get_running_loop().create_future()
        self.waiting[f"echo {word}"] = future
        return future

    async def run(self) -> None:
        state = self.server.state
        while True:
            with state.cond:
                fresh = state.sent[self.cursor :]
                self.cursor = len(state.sent)
            for message in fresh:
                future = self.waiting.pop(message.text.strip(), None)
                if future is not None and not future.done():
                    future.set_result(None)
            await asyncio.sleep(0.02)


async def wait_status(status_path: Path, after: float, timeout: float = 10.0) -> dict[str, Any]:
    """The status file once the gateway rewrote it after `after`."""
    deadline = time.monotonic() + timeout
    data: dict[str, Any] = {}
    while time.monotonic() < deadline:
        try:
            data = json.loads(status_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = {}
        if (data.get("updated_at") or 0) > after:
            return data
        await asyncio.sleep(0.1)
    return data


def growth(first: float, last: float) -> float:
    return round((last - first) / first, 4) if first else 0.0


async def drive(args: argparse.Namespace) -> SoakReport:
    import httpx

    from herald.testing.fake_llm import FakeLLMServer
    from herald.testing.fake_telegram import FakeTelegramServer
    from herald.testing.listener import free_port

    report = SoakReport()
    script = Script()
    llm = FakeLLMServer().start()
    llm.set_handler(script)
    telegram = FakeTelegramServer().start()
    tmp = Path(tempfile.mkdtemp(prefix="herald-soak-turns-"))
    home = tmp / "home"
    api_port, api_key = free_port(), secrets.token_hex(24)
    tg_users = write_home(home, llm, telegram, api_port, api_key, args)
    api_users = [f"soak-{i}" for i in range(CHATS - len(tg_users))]
    env = {**os.environ, "HERALD_HOME": str(home)}
    log = open(tmp / "gateway.stderr", "w", encoding="utf-8")  # noqa: SIM115
    command = [sys.executable, "-m", "herald", "gateway", "run"]
    if args.tracemalloc:
        command = [sys.executable, "-c", TRACEMALLOC_MAIN, str(tmp), "gateway", "run"]
    gateway = subprocess.Popen(command, env=env, stderr=log, stdout=log)
    replies = TelegramReplies(telegram)
    watcher = asyncio.ensure_future(replies.run())
    headers = {"Authorization": f"Bearer {api_key}"}
    client = httpx.AsyncClient(
        base_url=f"http://127.0.0.1:{api_port}/v1", headers=headers, timeout=args.answer_timeout
    )
    try:
        await wait_ready(client, gateway, tmp)
        started = time.monotonic()
        turn = 0

        async def api_turn(user: str, word: str) -> bool:
            body = {
                "model": "herald",
                "user": user,
                "messages": [{"role": "user", "content": word}],
            }
            response = await client.post("/chat/completions", json=body)
            text = (
                response.json()["choices"][0]["message"]["content"] if response.is_success else ""
            )
            ok = f"echo {word}" in (text or "")
            if not ok and len(report.misses) < 10:
                report.misses.append(f"api {word}: HTTP {response.status_code} {text!r:.300}")
            return ok

        async def tg_turn(user: str, word: str) -> bool:
            waiter = replies.expect(word)
            telegram.send_user_message(int(user), int(user), f"please {word}")
            try:
                await asyncio.wait_for(waiter, args.answer_timeout)
                return True
            except TimeoutError:
                if len(report.misses) < 10:
                    report.misses.append(f"telegram {word}: no answer in {args.answer_timeout} s")
                return False

        async def chat(kind: str, user: str, words: list[str]) -> int:
            answered = 0
            for word in words:
                ok = await (api_turn if kind == "api" else tg_turn)(user, word)
                answered += ok
            return answered

        async def resume(round_no: int) -> bool:
            listed = await client.get("/sessions", params={"source": "api", "limit": 500})
            sessions = sorted(s["id"] for s in listed.json()["data"])
            if not sessions:
                return False
            sid = sessions[round_no % len(sessions)]
            word = f"WORD-resume-{round_no}"
            reply = await client.post(f"/sessions/{sid}/messages", json={"content": word})
            return reply.is_success and f"echo {word}" in reply.json().get("content", "")

        chats = [("api", u) for u in api_users] + [("tg", u) for u in tg_users]
        round_no = 0
        while turn < args.turns:
            plan: dict[tuple[str, str], list[str]] = {c: [] for c in chats}
            for i in range(ROUND - 1):
                kind, user = chats[i % len(chats)]
                plan[(kind, user)].append(f"WORD-{kind}{user}-{round_no}-{i}")
            results = await asyncio.gather(*(chat(k, u, w) for (k, u), w in plan.items() if w))
            resumed = await resume(round_no)
            report.answered += sum(results) + resumed
            report.resumes += resumed
            turn += ROUND
            round_no += 1
            llm.forget_requests()
            report.samples.append(await sample(gateway.pid, home, turn, started))
            # Which peers the sockets go to, as the servers count them: a leak shows here.
            report.samples[-1].telegram_sockets = telegram.open_connections
            report.samples[-1].model_sockets = llm.open_connections
            baseline = 500 if args.turns > 500 else ROUND  # as the growths are measured
            if args.tracemalloc and (turn == baseline or turn >= args.turns):
                await snapshot(gateway.pid, tmp, turn)
            s = report.samples[-1]
            print(  # progress, on stderr so --json output stays one document
                f"turn {s.turns:6}  {s.seconds:7.1f} s  rss {s.rss_kb / 1024:7.1f} MiB  "
                f"fds {s.fds:4}  threads {s.threads:3}  wal {s.wal_bytes / 1024:8.0f} kB  "
                f"agents {s.live_agents} tg {s.telegram_sockets} model {s.model_sockets}",
                file=sys.stderr,
                flush=True,
            )
        report.seconds = round(time.monotonic() - started, 1)
    finally:
        watcher.cancel()
        await client.aclose()
        gateway.send_signal(signal.SIGTERM)
        try:
            gateway.wait(60)
        except subprocess.TimeoutExpired:
            gateway.kill()
        log.close()
        telegram.stop()
        llm.stop()
    report.turns = turn
    report.lost = turn - report.answered
    report.compressions = script.compressions
    report.model_calls = script.calls
    report.ms_per_turn = round(1000 * report.seconds / max(turn, 1), 1)
    summarize(report)
    if args.tracemalloc:
        report.heap_growth = heap_growth(tmp)
    if report.lost == 0:
        shutil.rmtree(tmp, ignore_errors=True)  # kept after a loss: gateway.stderr, logs/
    else:
        print(f"the run's home and logs are kept in {tmp}", file=sys.stderr)
    return report


# The gateway under tracemalloc: SIGUSR1 writes a snapshot to <dir>/heap-<n>.snap.
TRACEMALLOC_MAIN = """
import itertools, signal, sys, tracemalloc
tracemalloc.start(12)
where, counter = sys.argv.pop(1), itertools.count()
def dump(*_):
    tracemalloc.take_snapshot().dump(f"{where}/heap-{next(counter)}.snap")
signal.signal(signal.SIGUSR1, dump)
sys.argv[0] = "herald"
from herald.cli import main
main()
"""


async def snapshot(pid: int, tmp: Path, turn: int) -> None:
    before = set(tmp.glob("heap-*.snap"))
    os.kill(pid, signal.SIGUSR1)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and set(tmp.glob("heap-*.snap")) == before:
        await asyncio.sleep(0.2)
    await asyncio.sleep(1.0)  # the dump is written in one go; let it finish
    (new,) = set(tmp.glob("heap-*.snap")) - before
    new.rename(tmp / f"turn-{turn}.snap")


def heap_growth(tmp: Path, top: int = 15) -> list[str]:
    """Where the heap grew between the first and the last snapshot, biggest first."""
    import tracemalloc

    snaps = sorted(tmp.glob("turn-*.snap"), key=lambda p: int(p.stem.split("-")[1]))
    if len(snaps) < 2:
        return []
    first, last = (tracemalloc.Snapshot.load(str(p)) for p in (snaps[0], snaps[-1]))
    stats = last.compare_to(first, "traceback")
    lines = []
    for stat in stats[:top]:
        frames = [f"{f.filename.split('/src/')[-1]}:{f.lineno}" for f in stat.traceback[-4:]]
        lines.append(
            f"{stat.size_diff / 1024:+9.1f} kB {stat.count_diff:+7} blocks  {' <- '.join(reversed(frames))}"
        )
    return lines


async def wait_ready(client: Any, gateway: subprocess.Popen[bytes], tmp: Path) -> None:
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if gateway.poll() is not None:
            raise SystemExit(f"the gateway exited; see {tmp / 'gateway.stderr'}")
        try:
            if (await client.get("/models")).is_success:
                return
        except Exception:  # not listening yet
            pass
        await asyncio.sleep(0.2)
    raise SystemExit(f"the gateway did not come up in 180 s; see {tmp / 'gateway.stderr'}")


async def sample(pid: int, home: Path, turns: int, started: float) -> Sample:
    now = time.time()
    status = await wait_status(home / "gateway" / "status.json", now)
    rss, fds, threads = proc_sample(pid)
    wal = home / "state.db-wal"
    return Sample(
        turns=turns,
        seconds=round(time.monotonic() - started, 1),
        rss_kb=rss,
        fds=fds,
        threads=threads,
        wal_bytes=wal.stat().st_size if wal.exists() else 0,
        live_agents=status.get("live_agents"),
    )


def summarize(report: SoakReport) -> None:
    samples = report.samples
    if not samples:
        return
    base = next((s for s in samples if s.turns >= 500), samples[0])
    if base is samples[-1] and len(samples) > 1:
        base = samples[0]
    last = samples[-1]
    report.baseline_turn = base.turns
    report.rss_growth = growth(base.rss_kb, last.rss_kb)
    report.fd_growth = growth(base.fds, last.fds)
    report.thread_growth = growth(base.threads, last.threads)
    report.wal_growth = growth(base.wal_bytes, last.wal_bytes)
    report.live_agents_max = max((s.live_agents or 0) for s in samples)


def run(args: argparse.Namespace) -> int:
    if args.turns < ROUND:
        raise SystemExit(f"--turns must be at least {ROUND} (one round); got {args.turns}")
    report = asyncio.run(drive(args))
    if args.json:
        print(json.dumps(asdict(report), indent=2))
    else:
        print(
            f"{report.turns} turns in {report.seconds} s ({report.ms_per_turn} ms/turn), "
            f"answered {report.answered}, lost {report.lost}, resumes {report.resumes}, "
            f"compressions {report.compressions}, model calls {report.model_calls}"
        )
        print(
            f"growth from turn {report.baseline_turn} to {report.turns}: "
            f"rss {report.rss_growth:+.1%}  fds {report.fd_growth:+.1%}  "
            f"threads {report.thread_growth:+.1%}  wal {report.wal_growth:+.1%}  "
            f"(live agents at most {report.live_agents_max})"
        )
        for line in report.heap_growth:
            print(line)
    return 0 if report.lost == 0 else 1
