"""What appending a message costs as one session grows (issue 30: a stateless API
request of 50,000 tiny messages kept a core busy for minutes).

For sessions already holding 1k, 10k and 100k messages, in a real state.db on disk:
- single: the cost of one more `append_message` (its own transaction), median of 200;
- batch: the per-message cost of one `append_messages` call adding 1,000 more (one
  transaction, the way a stateless request's history is stored).
Printed per size, with the ratio to the 1k session: flat means the next position comes
from an index seek, not a scan of the session.

Run: python bench/store_append.py [--sizes 1000,10000,100000]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from herald.state import StateStore

FILL_BATCH = 5_000


def fill(store: StateStore, sid: str, count: int) -> None:
    for start in range(0, count, FILL_BATCH):
        n = min(FILL_BATCH, count - start)
        store.append_messages(sid, [{"role": "user", "content": f"m{start + i}"} for i in range(n)])


def measure(root: Path, size: int) -> tuple[float, float]:
    with StateStore(root / f"state-{size}.db") as store:
        sid = store.create_session(profile="default", source="bench")
        fill(store, sid, size)
        singles = []
        for n in range(200):
            started = time.perf_counter()
            store.append_message(sid, {"role": "user", "content": f"one more {n}"})
            singles.append(time.perf_counter() - started)
        batch = [{"role": "assistant", "content": f"b{i}"} for i in range(1_000)]
        started = time.perf_counter()
        store.append_messages(sid, batch)
        per_batched = (time.perf_counter() - started) / len(batch)
        return statistics.median(singles), per_batched


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory(prefix="herald-bench-append-") as tmp:
        results = {size: measure(Path(tmp), size) for size in sizes}
    base_single, base_batch = results[sizes[0]]
    print(
        f"{'session size':>12} {'single µs':>10} {'ratio':>6} {'batched µs/msg':>15} {'ratio':>6}"
    )
    for size, (single, batched) in results.items():
        print(
            f"{size:>12} {single * 1e6:>10.1f} {single / base_single:>6.2f}"
            f" {batched * 1e6:>15.1f} {batched / base_batch:>6.2f}"
        )


if __name__ == "__main__":
    main()
