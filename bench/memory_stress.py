"""Lost memory entries when several processes add to MEMORY.md at once.

Each trial makes a fresh home, starts P writer processes (fresh interpreters, as
the gateway, cron and the CLI are), lets them go together, and has each add N
distinct entries through `BuiltinMemory.add`. An entry whose add reported
success but that is missing from the final file is *lost*: the one thing that
must never happen. `--load K` runs K busy-loop processes during the trials, so
writers are descheduled while holding the lock (the conditions of the rare CI
failure). `--probe` also checks, inside every write, whether another process
holds the lock at the same moment (an O_EXCL sentinel taken after the lock and
dropped before its release), so a loss can be told apart as "two holders at
once" or "a write based on a stale read".

The lock library the writers use is whatever `import filelock` resolves to in
the child; point PYTHONPATH at another install to compare versions.

Run: python bench/memory_stress.py [--procs 8] [--adds 20] [--trials 50] [--load 0] [--probe]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from herald.memory import parse_entries
from herald.testing.homes import make_home

# The writer: waits for the go file so all writers contend from the first add,
# prints each entry it was told was stored, and (with --probe) counts overlaps.
WRITER = r"""
import contextlib, os, sys, time
from pathlib import Path
from herald.config import HeraldHome
from herald.config.schema_memory import MemoryConfig
from herald.memory import BuiltinMemory
import herald.memory.files as files_module
try:
    import herald.config.shared_file as shared
except ImportError:  # the code before issue 38: MemoryFiles.locked held a filelock.FileLock
    shared = None

home, name, adds, go = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
probe, lock_kind = sys.argv[5], sys.argv[6]

if lock_kind == "filelock" and shared is not None:
    from filelock import FileLock

    @contextlib.contextmanager
    def filelock_lock(path, *, timeout=10.0):
        with FileLock(str(shared.lock_path_for(path)), timeout=timeout):
            yield

    shared.shared_file_lock = filelock_lock

overlaps = 0


@contextlib.contextmanager
def sentinel_held():
    # Taken just inside the lock: if it already exists, another process is inside too.
    global overlaps
    sentinel = Path(home) / "holder.sentinel"
    try:
        fd = os.open(sentinel, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        overlaps += 1
        yield
        return
    os.close(fd)
    try:
        yield
    finally:
        os.unlink(sentinel)


if probe == "1" and shared is None:
    original_locked = files_module.MemoryFiles.locked

    @contextlib.contextmanager
    def probed_locked(self, target):
        with original_locked(self, target), sentinel_held():
            yield

    files_module.MemoryFiles.locked = probed_locked
elif probe == "1":
    original_lock = shared.shared_file_lock

    @contextlib.contextmanager
    def probed_lock(path, *, timeout=10.0):
        with original_lock(path, timeout=timeout), sentinel_held():
            yield

    shared.shared_file_lock = probed_lock

memory = BuiltinMemory(HeraldHome(Path(home)), MemoryConfig(memory_char_limit=10_000_000))
while not os.path.exists(go):
    time.sleep(0.001)
for n in range(adds):
    entry = f"{name} note {n}"
    result = memory.add("memory", entry)
    print(("ok " if result.success else "fail ") + entry, flush=True)
print(f"overlaps {overlaps}", flush=True)
"""

BUSY = "while True:\n    pass\n"


def _delete_when_filled(memories: Path, entries: int, stop: threading.Event) -> None:
    # What pytest does to a running test when another session reuses or rotates its
    # basetemp: the folder (memories, lock files and all) vanishes mid-run.
    path = memories / "MEMORY.md"
    while not stop.is_set():
        try:
            if len(parse_entries(path.read_text(encoding="utf-8"))) >= entries:
                shutil.rmtree(memories, ignore_errors=True)
                return
        except OSError:
            pass
        time.sleep(0.001)


def run_trial(
    root: Path, procs: int, adds: int, probe: bool, lock: str, delete_at: int = 0
) -> dict[str, int]:
    settings = make_home(root / "home")
    home = settings.home.root
    script = root / "writer.py"
    script.write_text(WRITER, encoding="utf-8")
    go = root / "go"
    writers = [
        subprocess.Popen(
            [
                sys.executable,
                str(script),
                str(home),
                f"w{i}",
                str(adds),
                str(go),
                str(int(probe)),
                lock,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(procs)
    ]
    stop = threading.Event()
    deleter = threading.Thread(
        target=_delete_when_filled, args=(settings.home.memories_dir, delete_at, stop)
    )
    if delete_at:
        deleter.start()
    time.sleep(0.05 * procs)  # let the interpreters import before the start signal
    go.touch()
    acknowledged: set[str] = set()
    failed = overlaps = crashed = 0
    outputs = [writer.communicate(timeout=600) for writer in writers]
    stop.set()
    if delete_at:
        deleter.join()
    for writer, (out, err) in zip(writers, outputs, strict=True):
        if writer.returncode != 0:
            crashed += 1
            print(
                err.strip().splitlines()[-1] if err.strip() else "writer crashed", file=sys.stderr
            )
        for line in out.splitlines():
            kind, _, rest = line.partition(" ")
            if kind == "ok":
                acknowledged.add(rest)
            elif kind == "fail":
                failed += 1
            elif kind == "overlaps":
                overlaps += int(rest)
    path = settings.home.memories_dir / "MEMORY.md"
    stored = set(parse_entries(path.read_text(encoding="utf-8"))) if path.exists() else set()
    return {
        "lost": len(acknowledged - stored),
        "acked": len(acknowledged),
        "failed": failed,
        "crashed": crashed,
        "overlaps": overlaps,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--procs", type=int, default=8, help="writer processes per trial")
    parser.add_argument("--adds", type=int, default=20, help="entries each writer adds")
    parser.add_argument("--trials", type=int, default=50)
    parser.add_argument("--load", type=int, default=0, help="extra busy-loop processes")
    parser.add_argument("--probe", action="store_true", help="count overlapping lock holders")
    parser.add_argument(
        "--lock",
        choices=("herald", "filelock"),
        default="herald",
        help="the lock update_shared_file takes: its own flock, or filelock.FileLock instead",
    )
    parser.add_argument(
        "--delete-home-at",
        type=int,
        default=0,
        metavar="E",
        help="delete the memories folder once MEMORY.md holds E entries (pytest basetemp reuse)",
    )
    args = parser.parse_args()

    version = subprocess.run(
        [sys.executable, "-c", "import filelock; print(filelock.__version__, filelock.__file__)"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    print(
        f"procs={args.procs} adds={args.adds} trials={args.trials} load={args.load} "
        f"probe={args.probe} lock={args.lock} delete_home_at={args.delete_home_at} filelock={version or 'not importable'}"
    )
    busy = [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(args.load)]
    totals = {"lost": 0, "acked": 0, "failed": 0, "crashed": 0, "overlaps": 0}
    losing_trials = 0
    began = time.perf_counter()
    try:
        for trial in range(args.trials):
            root = Path(tempfile.mkdtemp(prefix="memlock-stress-"))
            try:
                result = run_trial(
                    root, args.procs, args.adds, args.probe, args.lock, args.delete_home_at
                )
            finally:
                shutil.rmtree(root, ignore_errors=True)
            for key, value in result.items():
                totals[key] += value
            losing_trials += result["lost"] > 0
            print(
                f"trial {trial + 1:3d}: lost {result['lost']:4d} of {result['acked']:4d} acked"
                f"  failed {result['failed']}  crashed {result['crashed']}"
                + (f"  overlaps {result['overlaps']}" if args.probe else ""),
                flush=True,
            )
    finally:
        for process in busy:
            process.kill()
            process.wait()
    print(
        f"total: lost {totals['lost']} of {totals['acked']} acknowledged entries, "
        f"{losing_trials}/{args.trials} trials lost some; failed {totals['failed']}, "
        f"crashed {totals['crashed']}"
        + (f", overlapping holders {totals['overlaps']}" if args.probe else "")
        + f"; {time.perf_counter() - began:.1f}s"
    )
    sys.exit(1 if totals["lost"] else 0)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
