"""Search latency at scale: session search over state.db and the holographic fact store.

1. A `StateStore` with 1,000,000 messages across 20,000 sessions of generated
   text (Zipf-distributed English and technical vocabulary, names, rare
   words, paths, some Chinese). The schema, triggers and FTS index are the real
   ones: `StateStore` creates the file, then rows go in through a second
   connection in large transactions (the per-message API would take an fsync
   per call). Then ~200 discovery queries (common words, rare words,
   multi-word, quoted phrases, CJK) through `StateStore.search_messages`.
2. A `FactStore` with 100,000 facts: bulk and single-add throughput, then
   ~200 searches; plus a few probe / related / reason / contradict calls.

With the embedding model installed, the vector window (the newest 50,000 messages)
is embedded before session_search is timed, and how long that took is printed.

Prints timings only (no assertions). Takes a few minutes.

Run: python bench/search.py [--messages 1000000] [--sessions 20000] [--facts 100000]
     [--queries 200] [--seed 7] [--keep]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import shutil
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from herald.config.schema_memory import SessionSearchConfig
from herald.memory.holographic import FactStore, NewFact, numpy_available
from herald.memory.session_search import SessionSearch
from herald.state import StateStore


def _words(text: str) -> list[str]:
    return text.split()


COMMON = _words(
    """
the be to of and a in that have it for not on with he as you do at this but his by from
they we say her she or an will my one all would there their what so up out if about who
get which go me when make can like time no just him know take people into year your good
some could them see other than then now look only come its over think also back after use
two how our work first well way even new want because any these give day most us need
file run error test build fix code change look update check issue problem question help
"""
)

TECH = _words(
    """
python rust golang typescript javascript docker kubernetes postgres sqlite redis nginx
linux macos windows terminal shell bash zsh git branch commit merge rebase deploy staging
production server client request response timeout latency cache index query schema
migration config yaml json toml api endpoint token auth oauth session cookie header proxy
websocket stream buffer thread async await future promise callback queue worker cron job
memory cpu disk network socket port dns tls certificate firewall container image volume
pipeline workflow runner artifact release version semver package dependency lockfile venv
pytest fixture mock assertion coverage benchmark profile flamegraph regression bisect
logging tracing metrics dashboard alert pager incident postmortem rollback canary feature
flag refactor rename extract inline module package class function method variable
"""
)

NAMES = _words(
    """
Alice Bob Carol Dave Erin Frank Grace Heidi Ivan Judy Mallory Niaj Olivia Peggy Rupert
Sybil Trent Victor Walter Zoe Amara Bram Chiara Dmitri Elif Farid Greta Hiro Ines Jonas
Kenji Leila Mateo Nadia Oskar Priya Quentin Rosa Sanjay Tomas Uma Vera Wen Xavier Yusuf
"""
)

CJK_WORDS = [
    "数据库", "服务器", "部署", "配置", "日志", "错误", "用户", "测试", "性能", "缓存",
    "网络", "文件", "权限", "版本", "更新", "接口", "请求", "超时", "内存", "线程",
]  # fmt: skip


def percentile(values: Sequence[float], fraction: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


def report(label: str, seconds: Sequence[float]) -> None:
    ms = [s * 1000 for s in seconds]
    print(
        f"  {label:<22} n={len(ms):<4} p50 {percentile(ms, 0.5):8.2f} ms"
        f"   p95 {percentile(ms, 0.95):8.2f} ms   max {max(ms):8.2f} ms",
        flush=True,
    )


def rare_words(rng: random.Random, count: int) -> list[str]:
    """Pronounceable made-up words: each occurs in a handful of messages."""
    onsets = ["br", "cl", "dr", "fl", "gr", "k", "m", "pl", "qu", "sn", "st", "tr", "v", "z"]
    vowels = ["a", "e", "i", "o", "u", "ai", "ou"]
    codas = ["n", "x", "rk", "lt", "mb", "sp", "th", "nd", "rl", "ss"]
    words: set[str] = set()
    while len(words) < count:
        parts = [rng.choice(onsets) + rng.choice(vowels) for _ in range(rng.randint(2, 3))]
        words.add("".join(parts) + rng.choice(codas))
    return sorted(words)


class TextGenerator:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.rare = rare_words(rng, 20_000)
        vocabulary = COMMON + TECH
        self.vocabulary = vocabulary
        weights = [1.0 / (rank + 1) ** 0.9 for rank in range(len(vocabulary))]
        total = 0.0
        self.cum_weights = []
        for weight in weights:
            total += weight
            self.cum_weights.append(total)

    def sentence(self, words: int) -> str:
        rng = self.rng
        picked = rng.choices(self.vocabulary, cum_weights=self.cum_weights, k=words)
        roll = rng.random()
        if roll < 0.35:
            picked[rng.randrange(words)] = rng.choice(NAMES)
        if roll < 0.08:
            picked[rng.randrange(words)] = rng.choice(self.rare)
        if rng.random() < 0.05:
            picked[rng.randrange(words)] = (
                f"src/{rng.choice(TECH)}/{rng.choice(TECH)}_{rng.randrange(100)}.py"
            )
        text = " ".join(picked)
        if rng.random() < 0.02:
            run = "".join(rng.choice(CJK_WORDS) for _ in range(rng.randint(2, 5)))
            text += f" {run}。"
        return text[0].upper() + text[1:] + "."

    def message(self, role: str) -> str:
        rng = self.rng
        if role == "user":
            return self.sentence(rng.randint(4, 30))
        if role == "assistant":
            return " ".join(self.sentence(rng.randint(6, 24)) for _ in range(rng.randint(1, 4)))
        return json.dumps({"output": self.sentence(rng.randint(8, 40)), "exit_code": 0})


def build_state_db(path: Path, messages: int, sessions: int, rng: random.Random) -> None:
    StateStore(path).close()  # creates the real schema, triggers and FTS table
    gen = TextGenerator(rng)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA synchronous = OFF")  # the benchmark's copy; durability is moot
    started = time.perf_counter()
    base = time.time() - 365 * 86400
    per_session = [messages // sessions] * sessions
    for index in range(messages - sum(per_session)):
        per_session[index] += 1
    done = 0
    batch = 0
    conn.execute("BEGIN")
    for index, count in enumerate(per_session):
        created = base + index * (365 * 86400 / sessions)
        sid = time.strftime("%Y%m%d-%H%M%S", time.gmtime(created)) + f"-{index:06x}"
        conn.execute(
            "INSERT INTO sessions (id, profile, source, title, model, provider, created_at,"
            " updated_at) VALUES (?, 'default', ?, ?, 'fake-gpt', 'openai', ?, ?)",
            (
                sid,
                rng.choice(["cli", "telegram", "api", "cron"]),
                gen.sentence(4),
                created,
                created,
            ),
        )
        rows = []
        for seq in range(1, count + 1):
            role = "user" if seq % 2 else rng.choice(["assistant", "assistant", "tool"])
            rows.append(
                (sid, seq, float(seq), role, gen.message(role),
                 "call_1" if role == "tool" else None, "terminal" if role == "tool" else None,
                 created + seq)
            )  # fmt: skip
        conn.executemany(
            "INSERT INTO messages (session_id, seq, position, role, content, tool_call_id,"
            " tool_name, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        done += count
        batch += count
        if batch >= 50_000:
            conn.execute("COMMIT")
            conn.execute("BEGIN")
            batch = 0
            rate = done / (time.perf_counter() - started)
            print(f"  {done:>9,} messages  ({rate:,.0f}/s)", flush=True)
    conn.execute("COMMIT")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    elapsed = time.perf_counter() - started
    size = path.stat().st_size / 1e6
    print(f"  built {messages:,} messages in {elapsed:.1f} s ({messages / elapsed:,.0f}/s), "
          f"{size:,.0f} MB")  # fmt: skip


def discovery_queries(seed: int, count: int) -> dict[str, list[str]]:
    rare = rare_words(random.Random(seed), 20_000)  # the build drew its rare words first
    rng = random.Random(seed + 100)
    share = max(1, count // 6)
    common = COMMON[:40] + TECH[:20]
    return {
        "common word": [rng.choice(common) for _ in range(share)],
        "rare word": [rng.choice(rare) for _ in range(share)],
        "multi-word": [" ".join([*rng.sample(TECH, 2), rng.choice(NAMES)]) for _ in range(share)],
        "quoted phrase": [f'"{rng.choice(TECH)} {rng.choice(COMMON[:30])}"' for _ in range(share)],
        "CJK word": [rng.choice(CJK_WORDS) for _ in range(share)],
        "CJK rare combo": ["".join(rng.sample(CJK_WORDS, 3)) for _ in range(count - 5 * share)],
    }


def time_calls(fn: Callable[[str], object], queries: Sequence[str]) -> list[float]:
    out = []
    for query in queries:
        started = time.perf_counter()
        fn(query)
        out.append(time.perf_counter() - started)
    return out


def bench_state(workdir: Path, args: argparse.Namespace) -> dict[str, object]:
    print(f"[1] state.db: {args.messages:,} messages in {args.sessions:,} sessions", flush=True)
    path = Path(args.db) if args.db else workdir / "state.db"
    if path.exists():
        print(f"  reusing {path}", flush=True)
    else:
        build_state_db(path, args.messages, args.sessions, random.Random(args.seed))
    queries = discovery_queries(args.seed, args.queries)
    with StateStore(path) as store:
        warm = [q for group in queries.values() for q in group[:2]]
        time_calls(lambda q: store.search_messages(q, limit=20), warm)
        hit_counts: list[int] = []
        everything: list[float] = []
        print("  search_messages(limit=20):")
        for kind, group in queries.items():
            times = []
            for query in group:
                started = time.perf_counter()
                hits = store.search_messages(query, limit=20)
                times.append(time.perf_counter() - started)
                hit_counts.append(len(hits))
            report(kind, times)
            everything += times
        report("all", everything)
        print(f"  queries with no hit: {sum(1 for n in hit_counts if n == 0)}/{len(hit_counts)}")
        # (a Herald from before the semantic switch is timed with its defaults)
        known = SessionSearchConfig.model_fields
        settings = SessionSearchConfig(
            **({"semantic": not args.no_semantic} if "semantic" in known else {})
        )
        tool = SessionSearch(store, None, settings)
        if getattr(settings, "semantic", False):
            embed_backlog(store)
        time_calls(lambda q: tool.run(query=q), warm)
        print(f"  session_search(query) as the tool runs it ({settings}):")
        whole: list[float] = []
        for kind, group in queries.items():
            times = time_calls(lambda q: tool.run(query=q), group)
            report(kind, times)
            whole += times
        report("all", whole)
    return {
        "session_search": {
            "p50_ms": round(percentile(whole, 0.5) * 1000, 2),
            "p95_ms": round(percentile(whole, 0.95) * 1000, 2),
            "messages": args.messages,
        },
        "search_messages": {
            "p50_ms": round(percentile(everything, 0.5) * 1000, 2),
            "p95_ms": round(percentile(everything, 0.95) * 1000, 2),
        },
    }


def embed_backlog(store: StateStore) -> None:
    """Embed the vector window before timing: a history from before the model was
    installed is embedded once, by a background thread, and searches meanwhile share
    the CPU with it; the figures below are for the steady state after."""
    from herald.memory import semantic

    if not semantic.available():
        print("  (no embedding model installed: session_search is words only)")
        return
    started = time.perf_counter()
    done = semantic.index_pending(store, limit=None)
    seconds = time.perf_counter() - started
    rate = done / seconds if seconds else 0.0
    print(f"  embedded the backlog once: {done:,} messages in {seconds:.1f} s ({rate:.0f}/s)")


FACT_VERBS = ["prefers", "uses", "maintains", "owns", "dislikes", "reviews", "deploys", "wrote"]
FACT_TAILS = ["for", "at", "since", "on", "with", "during"]


def fact_text(rng: random.Random, gen: TextGenerator, index: int) -> NewFact:
    person = f"{rng.choice(NAMES)} {rng.choice(NAMES)}son"
    thing = " ".join(rng.sample(TECH, 2))
    if rng.random() < 0.2:
        thing += f" {rng.choice(gen.rare)}"
    text = (
        f"{person} {rng.choice(FACT_VERBS)} {thing} {rng.choice(FACT_TAILS)} "
        f"{rng.choice(TECH)} project {index % 997} since {1990 + index % 35}"
    )
    if rng.random() < 0.01:
        text += " " + "".join(rng.sample(CJK_WORDS, 3))
    return NewFact(text, f"topic-{rng.randrange(20)}")


def bench_facts(workdir: Path, args: argparse.Namespace) -> None:
    print(f"\n[2] fact store: {args.facts:,} facts (numpy: {numpy_available()})", flush=True)
    rng = random.Random(args.seed + 1)
    gen = TextGenerator(random.Random(args.seed + 2))
    with FactStore(workdir / "facts.db") as store:
        started = time.perf_counter()
        batch_size = 1000
        for start in range(0, args.facts, batch_size):
            batch = [
                fact_text(rng, gen, i) for i in range(start, min(args.facts, start + batch_size))
            ]
            store.add_many(batch)
            if (start + batch_size) % 20_000 == 0:
                rate = (start + batch_size) / (time.perf_counter() - started)
                print(f"  {start + batch_size:>9,} facts  ({rate:,.0f}/s)", flush=True)
        elapsed = time.perf_counter() - started
        print(
            f"  add_many: {args.facts:,} facts in {elapsed:.1f} s ({args.facts / elapsed:,.0f}/s)"
        )
        singles = [fact_text(rng, gen, args.facts + i) for i in range(200)]
        started = time.perf_counter()
        for new in singles:
            store.add(new.content, category=new.category)
        elapsed = time.perf_counter() - started
        print(f"  add (one transaction each, fsync): {200 / elapsed:,.0f} facts/s")
        size = (workdir / "facts.db").stat().st_size / 1e6
        print(f"  store: {store.count():,} facts, {len(store.categories())} categories, "
              f"{size:,.0f} MB")  # fmt: skip

        share = max(1, args.queries // 5)
        queries = {
            "person + topic": [
                f"{rng.choice(NAMES)} {rng.choice(NAMES)}son {rng.choice(TECH)}"
                for _ in range(share)
            ],
            "question": [
                f"what does {rng.choice(NAMES)} {rng.choice(NAMES)}son use for {rng.choice(TECH)}?"
                for _ in range(share)
            ],
            "common word": [rng.choice(FACT_VERBS + TECH[:10]) for _ in range(share)],
            "rare word": [rng.choice(gen.rare) for _ in range(share)],
            "CJK": ["".join(rng.sample(CJK_WORDS, 2)) for _ in range(args.queries - 4 * share)],
        }
        time_calls(lambda q: store.search(q), [group[0] for group in queries.values()])
        everything: list[float] = []
        print("  search(limit=8):")
        for kind, group in queries.items():
            times = time_calls(lambda q: store.search(q), group)
            report(kind, times)
            everything += times
        report("all", everything)

        print("  structured recall (5 calls each):")
        people = [f"{rng.choice(NAMES)} {rng.choice(NAMES)}son" for _ in range(5)]
        report("probe", time_calls(lambda p: store.probe("topic-3", p), people))
        report("related", time_calls(lambda p: store.related(p), people))
        report("reason", time_calls(lambda p: store.reason([p, "project"]), people))
        report("contradict(entity)", time_calls(lambda p: store.contradict(entity=p), people))
        started = time.perf_counter()
        pairs = store.contradict(limit=10)
        print(f"  contradict() over the whole store: {time.perf_counter() - started:.2f} s, "
              f"{len(pairs)} pairs shown")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--sessions", type=int, default=20_000)
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keep", action="store_true", help="keep the databases and say where")
    parser.add_argument("--skip-state", action="store_true")
    parser.add_argument("--skip-facts", action="store_true")
    parser.add_argument(
        "--db", help="state.db to reuse (built there first if missing): the build is slow"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object last")
    parser.add_argument(
        "--no-semantic", action="store_true", help="session_search without the vector source"
    )
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="herald-bench-search-"))
    out: dict[str, object] = {}
    try:
        # With --json the progress lines go to stderr, so stdout is the JSON alone.
        with contextlib.redirect_stdout(sys.stderr if args.json else sys.stdout):
            if not args.skip_state:
                out.update(bench_state(workdir, args))
            if not args.skip_facts:
                bench_facts(workdir, args)
        if args.json:
            print(json.dumps(out))
    finally:
        if args.keep:
            print(f"\ndatabases kept in {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
