"""Checkpoint cost on a 10,000-file tree (target: an unchanged snapshot in ≤ 50 ms).

Builds a project of N small files (default 10,000 in 100 directories, with a git
repository of one commit), then times: the first snapshot (every file hashed), an
unchanged snapshot (git's stat-cache walk, `write-tree`, no new
commit), a snapshot after one file changed, `list`, and a restore of one path. Also
times the full size walk that the first snapshot (and one near max_total_mb) does.
Printed: median and worst of each over the runs, in milliseconds; for the unchanged
snapshot also its CPU time, which a machine busy with other work distorts less.

Run: python bench/checkpoints.py [--files 10000] [--runs 7]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from herald.checkpoints import CheckpointStore, Limits
from herald.checkpoints.scan import scan_workdir


def build_tree(root: Path, files: int) -> None:
    per_dir = 100
    for n in range(files):
        directory = root / f"pkg{n // per_dir:03d}"
        if n % per_dir == 0:
            directory.mkdir(parents=True)
        (directory / f"mod{n:05d}.py").write_text(f"VALUE = {n}\n" * 20)
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    ident = ["-c", "user.name=b", "-c", "user.email=b@example.invalid"]
    subprocess.run(["git", "init", "-q"], cwd=root, check=True, env=env)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True, env=env)
    subprocess.run(["git", *ident, "commit", "-qm", "one"], cwd=root, check=True, env=env)
    # Packed, as a real repository is: 10,000 loose objects would double the file count.
    gc = subprocess.run(["git", "gc", "-q"], cwd=root, env=env, capture_output=True, text=True)
    if gc.returncode != 0:
        print(f"git gc failed ({gc.stderr.strip()}); the project's .git stays unpacked")


def cpu_ms() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime) * 1000


def timed(fn: Callable[[], object]) -> float:
    started = time.perf_counter()
    fn()
    return (time.perf_counter() - started) * 1000


def cpu_timed(fn: Callable[[], object]) -> float:
    """CPU time of this process and its git children: a number a loaded machine (other
    processes competing for the cores) changes much less than the wall time."""
    started = cpu_ms()
    fn()
    return cpu_ms() - started


def report(name: str, samples: list[float]) -> None:
    print(f"{name:<34} median {statistics.median(samples):8.1f} ms   worst {max(samples):8.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="herald-bench-checkpoints-") as tmp:
        project = Path(tmp) / "project"
        build_tree(project, args.files)
        limits = Limits.from_mb(10, 500)
        store = CheckpointStore(Path(tmp) / "home" / "checkpoints", project, limits)
        print(f"{args.files} files, {args.runs} runs")
        report("first snapshot", [timed(lambda: store.snapshot(tool="bench"))])
        unchanged = [timed(lambda: store.snapshot(tool="bench")) for _ in range(args.runs)]
        report("unchanged snapshot (no new commit)", unchanged)
        report(
            "  the same, CPU time (self + git)",
            [cpu_timed(lambda: store.snapshot(tool="bench")) for _ in range(args.runs)],
        )
        report(
            "full size walk (first, near limit)",
            [timed(lambda: scan_workdir(project, limits)) for _ in range(args.runs)],
        )
        changed = []
        for n in range(args.runs):
            (project / "pkg000" / "mod00000.py").write_text(f"CHANGED = {n}\n")
            changed.append(timed(lambda: store.snapshot(tool="bench")))
        report("snapshot after one file changed", changed)
        report("list", [timed(store.list) for _ in range(args.runs)])
        report(
            "restore one path",
            [timed(lambda: store.restore(2, path="pkg000")) for _ in range(args.runs)],
        )
        print(f"checkpoints kept: {len(store.list())}")


if __name__ == "__main__":
    main()
