"""Shared pieces of the CLI: loading settings with clean errors, consoles, the store."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    import typer
else:

    class _Typer:
        """`typer`, imported on first use: `herald chat -q` runs without it."""

        def __getattr__(self, name: str) -> Any:
            import typer

            return getattr(typer, name)

    typer = _Typer()

if TYPE_CHECKING:
    from rich.console import Console

    from herald.config import Settings
    from herald.state import StateStore

EXIT_OK = 0
EXIT_TURN_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

_err_console: Console | None = None


def err_console() -> Console:
    """Status and errors go to stderr; stdout is reserved for answers."""
    global _err_console
    if _err_console is None:
        from rich.console import Console

        _err_console = Console(stderr=True, highlight=False, soft_wrap=True)
    return _err_console


def refuse_from_tool_call(command: str) -> None:
    """Refuse a posture change started, however indirectly, by an agent's tool call
    (a script the model wrote and ran): the control plane is the owner's (DESIGN.md
    invariant 16). The command checker refuses the direct spellings; this catches
    what it cannot see. `command` is what the owner would type."""
    from herald.environments import started_by_tool_call

    if started_by_tool_call():
        fail(
            "refused: this changes Herald's security posture and was started by an agent's "
            f"tool call [control.posture_change]. Only the owner may do that: run `{command}` "
            "yourself in your own terminal."
        )


def fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    from rich.text import Text

    from herald.safety import redact

    # Never markup: messages carry paths, commands and hints like `herald[gateway]`.
    err_console().print(Text.assemble(("error:", "red"), " ", redact(message)), highlight=False)
    raise typer.Exit(code)


def profile_of(ctx: typer.Context) -> str | None:
    obj = ctx.find_root().obj
    return obj.get("profile") if isinstance(obj, dict) else None


def load(ctx: typer.Context) -> Settings:
    from pydantic import ValidationError

    from herald.config import ConfigError, ProfileNameError, load_settings

    try:
        settings = load_settings(profile_of(ctx))
    except (ConfigError, ProfileNameError) as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"cannot use the Herald home: {exc}")
    from herald.cli.logs import setup_logging

    root_obj = ctx.find_root().obj or {}
    setup_logging(settings, verbose=bool(root_obj.get("verbose")))
    overrides = root_obj.get("overrides") or {}
    try:  # command-line --provider / --model win over config.yaml for this run
        if overrides.get("provider") is not None:
            settings.config.model.provider = overrides["provider"]
        if overrides.get("model") is not None:
            settings.config.model.name = overrides["model"]
    except ValidationError:
        fail(
            f"unknown provider {overrides.get('provider')!r}: "
            "use openai, anthropic, openrouter, custom or local"
        )
    return settings


@contextmanager
def open_store(settings: Settings) -> Iterator[StateStore]:
    from herald.state import StateError, StateStore

    try:
        store = StateStore(settings.home.state_db)
    except StateError as exc:
        fail(str(exc))
    try:
        yield store
    finally:
        store.close()


def write_stdout(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def resolve_session_id(store: StateStore, prefix: str | None) -> str | None:
    """The full id for a session id or prefix the user typed, or a clean exit."""
    from herald.state import StateError

    if not prefix:
        return None
    try:
        return store.resolve_session_id(prefix)
    except StateError as exc:
        fail(str(exc))
