"""The `terminal` tool: run a shell command in the session's environment.

``terminal(command, timeout?, workdir?, background?)``. Every command passes
the safety gate first (`terminal_approval`: hard-line floor, then approval).
It then runs through ``ctx.environment`` (local or ssh, the tool cannot
tell), killed as a whole process group on timeout or interrupt. The result is
the redacted output, cut to 40 % head / 60 % tail when long (the full text
saved under ``cache/tool-results/``), followed by a status line such as
``[exit 0 · 1.2 s]``. With ``background=true`` the command keeps running and
the `process` tool reads, feeds, waits for and kills it.

A session without an environment gets one from `create_environment` on first
use, stored on ``ctx.environment`` (the owner of the context closes it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated

from pydantic import Field

from herald.config import ConfigError, HeraldConfig
from herald.config.schema_terminal import MAX_OUTPUT_CHARS_LIMIT
from herald.environments import (
    BackgroundProcess,
    Environment,
    EnvironmentConnectionError,
    create_environment,
)
from herald.safety import redact
from herald.tools.consequence import command_not_read_only
from herald.tools.declare import Flag, tool
from herald.tools.registry import ToolArgumentError, ToolContext, ToolRegistry, ToolSpec
from herald.tools.terminal_approval import CommandRefused, gate_command
from herald.tools.terminal_output import render_exec_result

TOOLSET = "terminal"


@dataclass
class BackgroundProcesses:
    """This agent's background processes (`ctx.own(BackgroundProcesses)`): id -> process,
    in start order."""

    by_id: dict[str, BackgroundProcess] = field(default_factory=dict)


MAX_RUNNING_BACKGROUND = 32
# The registry's generic cap sits above ours, so our head/tail cut and the status
# line always come first and survive.
RESULT_CAP = MAX_OUTPUT_CHARS_LIMIT + 20_000

# Whole seconds; strict so that `true` is not taken for 1 (the registry's coercion
# has already turned "30" and 30.0 into 30). The upper bound comes from the config.
Seconds = Annotated[int, Field(ge=1, strict=True)]


class EnvironmentUnreachable(CommandRefused):
    """The environment failed, not the command."""

    def __init__(self, exc: BaseException) -> None:
        super().__init__(f"the environment is unreachable, do not try to fix it: {exc}")


def session_environment(ctx: ToolContext) -> Environment:
    """The session's environment, created from the config on first use."""
    if ctx.environment is None:
        try:
            ctx.environment = create_environment(ctx.config or HeraldConfig(), secrets=ctx.secrets)
        except ConfigError as exc:
            raise CommandRefused(
                f"the terminal is not configured correctly, so no command can run: {exc}"
            ) from None
    return ctx.environment


def background_processes(ctx: ToolContext) -> dict[str, BackgroundProcess]:
    return ctx.own(BackgroundProcesses).by_id


def secret_values(ctx: ToolContext) -> list[str]:
    return ctx.secrets.secret_values() if ctx.secrets is not None else []


def short_command(command: str, ctx: ToolContext, limit: int = 200) -> str:
    text = redact(" ".join(command.split()), extra_secrets=secret_values(ctx))
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- arguments --------------------------------------------------------------------


def _check_command(command: str) -> None:
    if not command.strip():
        raise ToolArgumentError("command must be a non-empty string with the shell command to run")
    if "\x00" in command:
        raise ToolArgumentError("command contains a NUL character, which a shell cannot run")


def capped_timeout(seconds: int | None, default: int, maximum: int, *, hint: str) -> int:
    """`seconds` (already at least 1) checked against the configured maximum;
    the default, capped, when the model gave none."""
    if seconds is None:
        return min(default, maximum)
    if seconds > maximum:
        raise ToolArgumentError(
            f"timeout must be at most {maximum} seconds (terminal.max_timeout_seconds), "
            f"got {seconds}; {hint}"
        )
    return seconds


def _workdir(raw: str | None, environment: Environment) -> str:
    if raw is None or not raw.strip():
        return environment.cwd
    workdir = environment.resolve(raw)
    info = environment.stat(workdir)
    if info is None or not info.is_dir:
        state = "is not a directory" if info is not None else "does not exist"
        raise ToolArgumentError(f"workdir {workdir} {state}; pass an existing directory")
    return workdir


# -- the tool ---------------------------------------------------------------------


def _check_background_room(ctx: ToolContext) -> None:
    running = sum(1 for p in background_processes(ctx).values() if p.poll() is None)
    if running >= MAX_RUNNING_BACKGROUND:
        raise CommandRefused(
            f"{running} background processes are already running; stop some with "
            'process(action="kill", id=...) before starting another (see process(action="list"))'
        )


def _start_background(
    command: str, ctx: ToolContext, environment: Environment, cwd: str, note: str
) -> str:
    process = environment.spawn(command, cwd=cwd)
    background_processes(ctx)[process.id] = process
    lines = [
        f"Started background process {process.id} in {cwd}: {short_command(command, ctx)}",
        f'Read new output with process(action="log", id="{process.id}"); wait for it with '
        f'action "wait", send input with "write", stop it with "kill".',
    ]
    if note:
        lines.append(note)
    return "\n".join(lines)


@tool(
    toolset=TOOLSET,
    max_result_chars=RESULT_CAP,
    controls=("command", "workdir"),
    consequential=True,
    consequence=command_not_read_only,
)
def terminal(
    ctx: ToolContext,
    command: str,
    timeout: Seconds | None = None,
    workdir: str | None = None,
    background: Flag = False,
) -> str:
    """Run a shell command (bash) and return its combined stdout/stderr and exit code.
    Commands run non-interactively (stdin is empty); long output is cut to its head
    and tail with the full text saved to a file. Dangerous commands may need the
    user's approval; some are always refused. Use background=true for servers and
    other long-running commands, then the process tool to read or stop them.

    Args:
        command: the shell command to run
        timeout: seconds before the command is killed (default from config)
        workdir: working directory (relative to the session's directory)
        background: start it in the background and return its process id at once
    """
    _check_command(command)
    settings = (ctx.config or HeraldConfig()).terminal
    timeout = capped_timeout(
        timeout,
        settings.timeout_seconds,
        settings.max_timeout_seconds,
        hint="for longer work use background=true and the process tool",
    )
    if background:  # before the approval prompt: never ask, then refuse anyway
        _check_background_room(ctx)
    environment = session_environment(ctx)
    try:
        cwd = _workdir(workdir, environment)
        note = gate_command(command, ctx, environment, cwd)
        if background:
            return _start_background(command, ctx, environment, cwd, note)
        result = environment.execute(
            command, cwd=cwd, timeout=timeout, cancel=ctx.cancel, on_activity=ctx.on_activity
        )
    except EnvironmentConnectionError as exc:
        raise EnvironmentUnreachable(exc) from None
    except FileNotFoundError as exc:  # the workdir vanished between the check and the run
        raise ToolArgumentError(str(exc)) from None
    text = render_exec_result(
        result,
        timeout=timeout,
        max_chars=settings.max_output_chars,
        home=ctx.home,
        secrets=secret_values(ctx),
    )
    return f"{note}\n{text}" if note else text


# Declared once, as values; the composition root (herald.toolbox) adds them.
TOOLS: tuple[ToolSpec, ...] = (terminal,)


def register(target: ToolRegistry) -> None:
    """Add these tools to `target` (tests build small registries this way)."""
    target.add(*TOOLS)
