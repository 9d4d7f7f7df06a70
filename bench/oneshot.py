"""Cold start of a one-shot `herald chat -q` against the fake LLM server.

Each run starts `herald chat -q` as a fresh subprocess in a temporary home whose
model points at an in-process fake server scripted with one tool call (`todo`)
and then an answer. Per run it measures:

- time to first request: from just before the process is spawned to the moment
  the fake server received the first model request (both wall-clock seconds);
- total wall time of the process;
- peak RSS of the process (its own `ru_maxrss` via `os.wait4`);
- CPU seconds of the process (user + system, also from `os.wait4`): steadier than
  wall time on a machine other work is loading.

Bytecode: the children may write `.pyc` files (`PYTHONDONTWRITEBYTECODE` is
dropped) into a temporary `PYTHONPYCACHEPREFIX`, filled by a warm-up run, so a
run costs what it costs an installed Herald, not a recompile of every module.
`--no-bytecode` measures the compile-every-time case instead.

One more run (not timed) is made under `python -X importtime`: the modules a
one-shot imports (`sys.modules` at exit less a bare interpreter's: importtime alone
misses modules loaded with `importlib.import_module`), how many are Herald's, per
Herald package, and whether any of cron, kanban, MCP, delegation or the gateway was
imported (issue 32: a one-shot imports none of them unless its turn uses them).
`--imports` prints the Herald modules one per line as well, `--top N` the N modules
slowest to import by their own (self) time in that run.

It also times `herald --version` cold. Medians over the runs are printed, one
line per figure; `--json` prints them as one JSON object (save one run on the
old code and pass it with `--baseline FILE` to get after/before ratios).

Run: python bench/oneshot.py [--runs 7] [--api openai|anthropic]
     [--transport lean|sdk] [--json] [--baseline before.json] [--imports] [--top N]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from herald.testing.fake_llm import FakeLLMServer, Reply
from herald.testing.homes import fake_model_config, make_home


def herald_command(*flags: str) -> list[str]:
    script = shutil.which("herald")
    if script:
        return [sys.executable, *flags, script]
    return [
        sys.executable,
        *flags,
        "-c",
        "import sys; from herald.cli import main; sys.exit(main())",
    ]


NOT_IN_A_ONESHOT = (
    "herald.cron",
    "herald.kanban",
    "herald.mcp",
    "herald.delegation",
    "herald.gateway",
)


def import_times(stderr: str) -> list[tuple[str, int, int]]:
    """(module, self, cumulative microseconds) from `-X importtime` output."""
    out = []
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        self_us, cumulative, name = line.removeprefix("import time:").split("|", 2)
        out.append((name.strip(), int(self_us), int(cumulative)))
    return out


# `-X importtime` sees only the `import` statement's path: a module loaded with
# `importlib.import_module` (how the toolbox loads a capability) is missing from it. So
# the module list is `sys.modules` at exit, less what a bare interpreter starts with.
MODULES_AT_EXIT = """
import atexit, sys
out = sys.argv.pop(1)
def dump():
    with open(out, "w") as f:
        f.write("\\n".join(sys.modules))
atexit.register(dump)
from herald.cli import main
sys.exit(main())
"""


def import_report(
    server: FakeLLMServer,
    root: Path,
    api: str,
    base_env: dict[str, str],
    listing: bool,
    top: int,
) -> dict[str, Any]:
    server.reset()
    server.enqueue(Reply.tool_call("todo", {"todos": []}), Reply.text("Done."))
    settings = make_home(root, fake_model_config(server, api))
    env = child_env(base_env, HERALD_HOME=str(settings.home.root))
    dump = root / "modules.txt"
    probe = [sys.executable, "-X", "importtime", "-c", MODULES_AT_EXIT, str(dump)]
    argv = [*probe, "chat", "-q", "Make an empty todo list."]
    proc = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"herald chat -q failed: {proc.stderr[-2000:]}")
    bare = subprocess.run(
        [sys.executable, "-c", "import sys; print('\\n'.join(sys.modules))"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    names = [n for n in dump.read_text().split() if n not in set(bare)]
    herald = [n for n in names if n == "herald" or n.startswith("herald.")]
    packages: dict[str, int] = {}
    for name in herald:
        package = ".".join(name.split(".")[:2])
        packages[package] = packages.get(package, 0) + 1
    unwanted = sorted(n for n in herald if n.startswith(NOT_IN_A_ONESHOT))
    if listing:
        for name in herald:
            print(f"    {name}")
    times = import_times(proc.stderr)
    return {
        "modules": len(names),
        "herald_modules": len(herald),
        "packages": dict(sorted(packages.items(), key=lambda kv: -kv[1])),
        "unwanted": unwanted,
        "import_s": sum(self_us for _, self_us, _ in times) / 1e6,
        "top_self": sorted(times, key=lambda t: -t[1])[:top],
    }


def run_measured(argv: list[str], env: dict[str, str]) -> tuple[float, float, float, int, float]:
    """(start wall time, elapsed seconds, peak RSS in MB, exit status) of one process."""
    started = time.time()
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    proc.stderr.close()
    if proc.returncode != 0:
        sys.stderr.write(err.decode(errors="replace"))
    cpu = usage.ru_utime + usage.ru_stime
    return started, elapsed, usage.ru_maxrss / 1024.0, proc.returncode, cpu


def child_env(base: dict[str, str], **extra: str) -> dict[str, str]:
    return {**base, **extra}


def one_shot(
    server: FakeLLMServer, root: Path, api: str, transport: str | None, base_env: dict[str, str]
) -> dict[str, float]:
    server.reset()
    server.enqueue(Reply.tool_call("todo", {"todos": []}), Reply.text("Done."))
    model: dict[str, Any] = {} if transport is None else {"transport": transport}
    settings = make_home(root, fake_model_config(server, api, **model))
    env = child_env(base_env, HERALD_HOME=str(settings.home.root))
    argv = [*herald_command(), "chat", "-q", "Make an empty todo list, then say done."]
    started, elapsed, rss, code, cpu = run_measured(argv, env)
    if code != 0:
        raise SystemExit(f"herald chat -q failed with exit status {code}")
    requests = server.model_requests()
    if len(requests) != 2:
        raise SystemExit(f"expected 2 model requests, the server saw {len(requests)}")
    return {
        "first_request_s": requests[0].timestamp - started,
        "wall_s": elapsed,
        "peak_rss_mb": rss,
        "cpu_s": cpu,
    }


def version_time(env: dict[str, str]) -> float:
    _, elapsed, _, code, _ = run_measured([*herald_command(), "--version"], env)
    if code != 0:
        raise SystemExit("herald --version failed")
    return elapsed


FIGURES = {
    "first_request_s": "s",
    "wall_s": "s",
    "cpu_s": "s",
    "peak_rss_mb": "MB",
    "version_s": "s",
}


def measure_variant(
    srv: FakeLLMServer, root: Path, api: str, transport: str | None, base_env: dict[str, str]
) -> dict[str, float]:
    run = one_shot(srv, root, api, transport, base_env)
    run["version_s"] = version_time(child_env(base_env, HERALD_HOME=str(root / "version-home")))
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--api", choices=("openai", "anthropic"), default="openai")
    parser.add_argument("--transport", choices=("lean", "sdk"), default=None)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--baseline", type=Path, help="a --json output to compare with")
    parser.add_argument(
        "--vs-src",
        type=Path,
        help="another Herald source tree (e.g. main's src/): run it as PYTHONPATH in turn "
        "with this one, A B A B, and print the ratios pair by pair",
    )
    parser.add_argument("--no-bytecode", action="store_true", help="children compile every module")
    parser.add_argument("--imports", action="store_true", help="list the Herald modules imported")
    parser.add_argument(
        "--top", type=int, default=0, help="print the N modules slowest to import (self time)"
    )
    args = parser.parse_args()

    variants: list[tuple[str, str | None, dict[str, str]]] = []
    with tempfile.TemporaryDirectory(prefix="herald-bench-oneshot-") as tmp, FakeLLMServer() as srv:
        base_env = dict(os.environ)
        if not args.no_bytecode:
            base_env.pop("PYTHONDONTWRITEBYTECODE", None)
            base_env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        variants.append(("this", args.transport, base_env))
        if args.vs_src:
            variants.append(("vs", None, child_env(base_env, PYTHONPATH=str(args.vs_src))))
        samples: dict[str, dict[str, list[float]]] = {
            name: {key: [] for key in FIGURES} for name, _, _ in variants
        }
        for name, transport, env in variants:  # warm-up: OS file cache and bytecode cache
            measure_variant(srv, Path(tmp) / f"warmup-{name}", args.api, transport, env)
        imports = import_report(
            srv, Path(tmp) / "imports", args.api, base_env, args.imports, args.top
        )
        for index in range(args.runs):
            for name, transport, env in variants:
                run = measure_variant(srv, Path(tmp) / f"{name}{index}", args.api, transport, env)
                for key, value in run.items():
                    samples[name][key].append(value)
    result: dict[str, Any] = {key: statistics.median(v) for key, v in samples["this"].items()}
    result["runs"] = args.runs
    result["modules"] = imports["modules"]
    result["herald_modules"] = imports["herald_modules"]
    result["unwanted"] = imports["unwanted"]
    if args.json:
        print(json.dumps(result))
        return
    label = (
        f"herald chat -q, one tool call, {args.api}, transport={args.transport or 'default'}"
        f"{', no bytecode cache' if args.no_bytecode else ''}"
    )
    print(f"{label}: median of {args.runs} cold runs")
    baseline = json.loads(args.baseline.read_text()) if args.baseline else None
    for key, unit in FIGURES.items():
        line = f"  {key:16} {result[key]:8.3f} {unit}"
        if args.vs_src:
            this, other = samples["this"][key], samples["vs"][key]
            ratios = [a / b for a, b in zip(this, other, strict=True) if b]
            line += (
                f"   vs {statistics.median(other):8.3f} {unit}"
                f"   ratio (pairwise median) {statistics.median(ratios):.2f}x"
            )
        elif baseline and baseline.get(key):
            line += (
                f"   before {baseline[key]:8.3f} {unit}   ratio {result[key] / baseline[key]:.2f}x"
            )
        print(line)
    before = f" (before: {baseline['modules']})" if baseline and "modules" in baseline else ""
    print(f"  modules imported {imports['modules']}{before}, Herald's {imports['herald_modules']}")
    top = ", ".join(f"{name} {n}" for name, n in list(imports["packages"].items())[:12])
    print(f"  Herald modules by package: {top}")
    if args.top:
        print(
            f"  slowest imports (self time; all imports {imports['import_s']:.3f} s in that run):"
        )
        for name, self_us, cumulative in imports["top_self"]:
            print(f"    {self_us / 1000:7.1f} ms  (cumulative {cumulative / 1000:7.1f} ms)  {name}")
    unwanted = imports["unwanted"]
    print(
        "  cron, kanban, MCP, delegation, gateway modules imported: "
        + (", ".join(unwanted) if unwanted else "none")
    )


if __name__ == "__main__":
    main()
