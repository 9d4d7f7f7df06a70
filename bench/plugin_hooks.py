"""What plugin hooks cost: per emit with no hooks, with one and with five quick hooks
(each runs on its own time-limited thread), and what loading a set of directory
plugins costs once per process.

Printed per operation, plus the hooked/unhooked ratio. Nothing here is a test: it
reports numbers to compare before and after a change.

Run: python bench/plugin_hooks.py [--calls 2000] [--plugins 20]
"""

from __future__ import annotations

import argparse
import tempfile
import textwrap
import time
from pathlib import Path

from herald.config import HeraldConfig, HeraldHome
from herald.plugins import Hook, HookRunner, load_plugins


def per_call(runner: HookRunner, calls: int) -> float:
    started = time.perf_counter()
    for _ in range(calls):
        runner.emit("post_tool_call", name="x", args={}, result="ok", is_error=False)
    return (time.perf_counter() - started) / calls


def load_cost(count: int) -> float:
    with tempfile.TemporaryDirectory(prefix="herald-bench-plugins-") as tmp:
        home = HeraldHome(Path(tmp) / "home").ensure()
        names = []
        for i in range(count):
            name = f"p{i}"
            names.append(name)
            path = home.plugins_dir / name
            path.mkdir(parents=True)
            (path / "plugin.yaml").write_text(f"name: {name}\nversion: 0.1.0\n")
            (path / "__init__.py").write_text(
                textwrap.dedent(
                    f'''
                    def t{i}(ctx, text: str) -> str:
                        """Echo.

                        Args:
                            text: what to echo
                        """
                        return text

                    def register(ctx):
                        ctx.register_tool(t{i})
                        ctx.register_hook("post_tool_call", lambda name: None)
                    '''
                )
            )
        config = HeraldConfig.model_validate({"plugins": {"enabled": names}})
        started = time.perf_counter()
        loaded = load_plugins(config, home)
        elapsed = time.perf_counter() - started
        assert len(loaded.loaded) == count, loaded.messages()
        return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--plugins", type=int, default=20)
    args = parser.parse_args()
    none = per_call(HookRunner(), args.calls)
    one = per_call(HookRunner((Hook("post_tool_call", lambda name: None, "b"),)), args.calls)
    five = per_call(
        HookRunner(tuple(Hook("post_tool_call", lambda name: None, "b", 0, i) for i in range(5))),
        args.calls,
    )
    print(f"emit, no hooks:     {none * 1e6:8.2f} µs/call")
    print(f"emit, one hook:     {one * 1e6:8.2f} µs/call")
    print(f"emit, five hooks:   {five * 1e6:8.2f} µs/call ({five / max(one, 1e-12):.1f}x one)")
    total = load_cost(args.plugins)
    print(
        f"load {args.plugins} plugins:  {total * 1e3:8.1f} ms "
        f"({total / args.plugins * 1e3:.2f} ms per plugin, once per process)"
    )


if __name__ == "__main__":
    main()
