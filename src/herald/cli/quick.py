"""The fast path of `herald chat -q TEXT`: parse the few options a one-shot takes
without building the typer app, then run the same `run_oneshot` the app runs.

Building the app imports every subcommand module and typer's parameter
machinery, which costs more start-up time than the turn's own wire path. Any
argument list this parser is not sure about (``--help``, an unknown option, a
bad number, a missing value) returns None and the full app handles it, so
errors and help read exactly as before.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

GLOBAL_VALUE_OPTIONS = {"--profile": "profile", "-p": "profile"}
HOISTED_VALUE_OPTIONS = GLOBAL_VALUE_OPTIONS
GLOBAL_FLAGS = {"--verbose": "verbose", "-v": "verbose"}
CHAT_VALUE_OPTIONS = {
    "--query": "query",
    "-q": "query",
    "--resume": "resume",
    "-r": "resume",
    "--max-iterations": "max_iterations",
    "--max-turns": "max_iterations",  # the old name of the flag
    "--model": "model",
    "-m": "model",
    "--provider": "provider",
}
CHAT_FLAGS = {"--json": "as_json"}


@dataclass
class OneShotArgs:
    query: str
    profile: str | None = None
    verbose: bool = False
    as_json: bool = False
    resume: str | None = None
    max_iterations: int | None = None
    model: str | None = None
    provider: str | None = None


def _split(arg: str) -> tuple[str, str | None]:
    if arg.startswith("--") and "=" in arg:
        name, value = arg.split("=", 1)
        return name, value
    return arg, None


def parse_oneshot(argv: list[str]) -> OneShotArgs | None:
    """`argv` (without the program name) if it is a plain ``chat -q`` call, else None."""
    values: dict[str, Any] = {}
    index, in_chat = 0, False
    while index < len(argv):
        name, inline = _split(argv[index])
        # --profile may come after the subcommand too (the app hoists it to the front).
        value_options = (
            {**CHAT_VALUE_OPTIONS, **HOISTED_VALUE_OPTIONS} if in_chat else GLOBAL_VALUE_OPTIONS
        )
        flags = CHAT_FLAGS if in_chat else GLOBAL_FLAGS
        if not in_chat and name == "chat" and inline is None:
            in_chat = True
        elif name in flags and inline is None:
            values[flags[name]] = True
        elif name in value_options:
            if inline is None:
                index += 1
                if index >= len(argv):
                    return None
                inline = argv[index]
            key = value_options[name]
            if key in values or inline.startswith("-"):
                return None  # repeated, or probably a forgotten value: let typer say so
            values[key] = inline
        else:
            return None
        index += 1
    if not in_chat or values.get("query") is None:
        return None
    if "max_iterations" in values:
        try:
            values["max_iterations"] = int(values["max_iterations"])
        except ValueError:
            return None
        if values["max_iterations"] < 1:
            return None
    return OneShotArgs(**values)


class _Context:
    """What `herald.cli.common.load` reads of a typer context: the root's ``obj``."""

    def __init__(self, obj: dict[str, Any]) -> None:
        self.obj = obj

    def find_root(self) -> _Context:
        return self


def run_quick(args: OneShotArgs) -> int:
    """Run the one-shot; the exit code (a `fail()` inside ends it the same way)."""
    from herald.cli.common import load
    from herald.cli.oneshot import run_oneshot

    ctx = _Context(
        {
            "profile": args.profile,
            "verbose": args.verbose,
            "overrides": {"model": args.model, "provider": args.provider},
        }
    )
    try:
        settings = load(ctx)  # type: ignore[arg-type]
        return run_oneshot(
            settings,
            args.query,
            as_json=args.as_json,
            resume=args.resume,
            max_iterations=args.max_iterations,
        )
    except (KeyboardInterrupt, EOFError):
        sys.stderr.write("\nAborted!\n")  # what the app (click) prints
        return 1
    except Exception as exc:
        code = getattr(exc, "exit_code", None)
        if isinstance(code, int) and type(exc).__module__.split(".")[0] in ("typer", "click"):
            return code  # fail() raised typer.Exit, as it does under the app
        raise


def main_if_oneshot(argv: list[str]) -> bool:
    """Run ``herald chat -q ...`` here when `argv` is a plain one; False otherwise."""
    args = parse_oneshot(argv)
    if args is None:
        return False
    from herald.cli.startup import pause_collection

    pause_collection()  # run_oneshot resumes collection when the turn starts
    code = run_quick(args)
    sys.stdout.flush()
    if code:
        sys.exit(code)
    return True
