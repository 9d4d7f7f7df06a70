"""Claims per second on each board backend, with competing worker processes.

For each backend (SQLite in a temporary home; PostgreSQL on a throwaway server this
script starts, see herald.testing.postgres), the board is filled with N tasks, then
W worker processes start together and each loops: claim the most urgent ready task
(with a lease), mark it done with the lease, until nothing is left. A claim here is
the full claim + complete pair, i.e. two write transactions. Checks that every task
was claimed exactly once, then prints claims per second and per-claim latency.

Run: python bench/kanban_claims.py [--tasks 2000] [--workers 8] [--backend sqlite|postgres|both]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import shutil
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path

from herald.kanban import Board, ClaimOwner, NewTask


def _open(spec: str) -> Board:
    kind, _, where = spec.partition(":")
    if kind == "sqlite":
        from herald.kanban.sqlite_board import SqliteBoard

        return SqliteBoard(Path(where))
    from herald.kanban.postgres_board import PostgresBoard

    return PostgresBoard(where)


def _worker(spec: str, index: int, start: mp.Event, out: mp.Queue) -> None:  # type: ignore[type-arg]
    board = _open(spec)
    owner = ClaimOwner(f"bench-{index}", "bench", index)
    latencies: list[float] = []
    claimed: list[int] = []
    start.wait()
    while True:
        began = time.perf_counter()
        lease = board.claim(owner, 60)
        if lease is None:
            break
        board.complete(lease.task_id, "ok", lease=lease, author=owner.name)
        latencies.append(time.perf_counter() - began)
        claimed.append(lease.task_id)
    board.close()
    out.put((claimed, latencies))


def run(spec: str, tasks: int, workers: int) -> dict[str, float]:
    board = _open(spec)
    for i in range(tasks):
        board.add(NewTask(f"task {i}", priority=i % 5))
    board.close()
    ctx = mp.get_context("spawn")
    start, out = ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(spec, i, start, out)) for i in range(workers)]
    for p in procs:
        p.start()
    time.sleep(2.0)  # let every worker import and connect before the gun
    began = time.perf_counter()
    start.set()
    results = [out.get() for _ in procs]
    elapsed = time.perf_counter() - began
    for p in procs:
        p.join()
    ids = Counter(t for claimed, _ in results for t in claimed)
    assert len(ids) == tasks and max(ids.values()) == 1, "a task was claimed twice or lost"
    latencies = sorted(x for _, lat in results for x in lat)
    return {
        "claims_per_s": tasks / elapsed,
        "p50_ms": statistics.median(latencies) * 1000,
        "p95_ms": latencies[int(len(latencies) * 0.95)] * 1000,
        "per_worker": [len(c) for c, _ in results],  # type: ignore[dict-item]
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=2000)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--backend", choices=["sqlite", "postgres", "both"], default="both")
    args = parser.parse_args()
    numbers: dict[str, dict[str, float]] = {}
    if args.backend in ("sqlite", "both"):
        tmp = Path(tempfile.mkdtemp(prefix="kanban-bench-"))
        try:
            numbers["sqlite"] = run(f"sqlite:{tmp / 'kanban.db'}", args.tasks, args.workers)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    if args.backend in ("postgres", "both"):
        from herald.testing.postgres import PostgresServer

        with PostgresServer() as server:
            numbers["postgres"] = run(f"postgres:{server.dsn}", args.tasks, args.workers)
    print(f"{args.tasks} tasks, {args.workers} competing worker processes (claim + complete each)")
    for name, n in numbers.items():
        print(
            f"  {name:<9} {n['claims_per_s']:8.1f} claims/s   p50 {n['p50_ms']:6.2f} ms   "
            f"p95 {n['p95_ms']:6.2f} ms   per worker {n['per_worker']}"
        )
    if len(numbers) == 2:
        ratio = numbers["postgres"]["claims_per_s"] / numbers["sqlite"]["claims_per_s"]
        print(f"  postgres / sqlite throughput: {ratio:.2f}x")


if __name__ == "__main__":
    main()
