"""The `process` tool: look after background processes started by `terminal`.

``process(action, id?, input?, timeout?, offset?, eof?)`` with actions
``list``, ``poll``, ``log``, ``wait``, ``kill`` and ``write``. Each process
remembers how far the model has read its output, so ``log`` and ``wait``
return only what is new; ``offset`` reads from any earlier point. Outputs are
redacted and bounded. Input written to a process passes the same safety gate
as a command: a background shell must not become a way around approval.
Results are JSON objects.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, get_args

from pydantic import Field

from herald.config import HeraldConfig
from herald.environments import BackgroundProcess, EnvironmentConnectionError
from herald.safety import redact
from herald.tools.consequence import actions
from herald.tools.declare import Flag, tool
from herald.tools.registry import ToolArgumentError, ToolContext, ToolRegistry, ToolSpec
from herald.tools.terminal import (
    TOOLSET,
    EnvironmentUnreachable,
    Seconds,
    background_processes,
    capped_timeout,
    secret_values,
    session_environment,
    short_command,
)
from herald.tools.terminal_approval import gate_command
from herald.tools.terminal_output import head_tail

Action = Literal["list", "poll", "log", "wait", "kill", "write"]
ACTIONS: tuple[str, ...] = get_args(Action)
# A character position in a process's output; strict so that `true` is not 1.
Offset = Annotated[int, Field(ge=0, strict=True)]


@dataclass
class ProcessViews:
    """What this agent's `process` calls have seen (`ctx.own(ProcessViews)`)."""

    read_offsets: dict[str, int] = field(default_factory=dict)  # id -> characters shown
    killed: set[str] = field(default_factory=set)  # ids the model killed


MAX_LOG_CHARS = 20_000
POLL_TAIL_CHARS = 2_000
DEFAULT_WAIT_S = 30
MAX_INPUT_CHARS = 65_536
RESULT_CAP = 60_000  # JSON escaping of MAX_LOG_CHARS of output stays below this


def _offsets(ctx: ToolContext) -> dict[str, int]:
    return ctx.own(ProcessViews).read_offsets


def _status(process: BackgroundProcess, ctx: ToolContext) -> dict[str, Any]:
    code = process.poll()
    killed = process.id in ctx.own(ProcessViews).killed
    status = "running" if code is None else ("killed" if killed else "exited")
    return {
        "id": process.id,
        "command": short_command(process.command, ctx),
        "status": status,
        "exit_code": None if killed else code,
        "age_s": round(time.time() - process.started_at, 1),
    }


def _redact(text: str, ctx: ToolContext) -> str:
    return redact(text, extra_secrets=secret_values(ctx))


def _new_output(process: BackgroundProcess, ctx: ToolContext) -> dict[str, Any]:
    """Output since the model's last read; more than the cap keeps head and tail
    (the middle stays readable with offset) and the read position moves to the end."""
    offsets = _offsets(ctx)
    start = offsets.get(process.id, 0)
    text, end = process.read_output(start)
    offsets[process.id] = end
    result: dict[str, Any] = {"from_offset": start, "offset": end}
    if len(text) > MAX_LOG_CHARS:
        note = (
            f"\n[… {len(text) - MAX_LOG_CHARS:,} characters omitted; read them with "
            f'process(action="log", id="{process.id}", offset=N) …]\n'
        )
        text = head_tail(text, MAX_LOG_CHARS, note)
    result["output"] = _redact(text, ctx)
    return result


def _read_from(process: BackgroundProcess, offset: int, ctx: ToolContext) -> dict[str, Any]:
    text, end = process.read_output(offset)
    chunk = text[:MAX_LOG_CHARS]
    result: dict[str, Any] = {"from_offset": offset, "output": _redact(chunk, ctx)}
    if len(chunk) < len(text):
        result["next_offset"] = end - (len(text) - len(chunk))
    else:
        result["offset"] = end
        _offsets(ctx)[process.id] = max(_offsets(ctx).get(process.id, 0), end)
    return result


def _find(process_id: str | None, ctx: ToolContext) -> BackgroundProcess:
    processes = background_processes(ctx)
    if process_id is None or not process_id.strip():
        raise ToolArgumentError("this action needs id, the process id returned by terminal")
    process = processes.get(process_id.strip())
    if process is None:
        known = ", ".join(processes) or "none"
        raise ToolArgumentError(f"no background process {process_id!r}; known ids: {known}")
    return process


def _write(
    process: BackgroundProcess, data: str | None, eof: bool, ctx: ToolContext
) -> dict[str, Any]:
    if data is None and not eof:
        raise ToolArgumentError("write needs input (the text to send) or eof=true")
    data = data or ""
    if len(data) > MAX_INPUT_CHARS:
        raise ToolArgumentError(f"input is longer than {MAX_INPUT_CHARS:,} characters")
    if process.poll() is not None:
        raise ToolArgumentError(f"process {process.id} has already finished; it takes no input")
    if data.strip():
        environment = session_environment(ctx)
        gate_command(data, ctx, environment, environment.cwd)
    try:
        if data:
            process.write_stdin(data)
        if eof:
            close = getattr(process, "close_stdin", None)
            if close is None:
                raise ToolArgumentError("this environment cannot close a process's input")
            close()
    except (BrokenPipeError, TimeoutError) as exc:
        raise ToolArgumentError(f"could not write to {process.id}: {exc}") from None
    return {**_status(process, ctx), "written_chars": len(data), "stdin_closed": eof}


@tool(
    toolset=TOOLSET,
    max_result_chars=RESULT_CAP,
    controls=("input",),
    consequential=True,
    consequence=actions("write"),
)
def process(
    ctx: ToolContext,
    action: Action,
    id: str | None = None,
    input: str | None = None,
    timeout: Seconds | None = None,
    offset: Offset | None = None,
    eof: Flag = False,
) -> dict[str, Any]:
    """Manage background processes started with terminal(background=true).
    list: all of them; poll: status and the last lines of output; log: output not
    read yet (or from offset); wait: wait up to timeout seconds for it to finish,
    then its new output; kill: stop it and everything it started; write: send input
    to its stdin (eof=true closes stdin afterwards).

    Args:
        id: process id from terminal (all but list)
        input: text to send (write)
        timeout: seconds to wait (wait; default 30)
        offset: read output from this character offset (log)
        eof: close stdin after writing (write)
    """
    try:
        if action == "list":
            return {"processes": [_status(p, ctx) for p in background_processes(ctx).values()]}
        found = _find(id, ctx)
        if action == "poll":
            text, end = found.read_output(max(0, _current_end(found) - POLL_TAIL_CHARS))
            unread = end - _offsets(ctx).get(found.id, 0)
            return {**_status(found, ctx), "output_tail": _redact(text, ctx), "unread": unread}
        if action == "log":
            if offset is None:
                return {**_status(found, ctx), **_new_output(found, ctx)}
            return {**_status(found, ctx), **_read_from(found, offset, ctx)}
        if action == "wait":
            settings = (ctx.config or HeraldConfig()).terminal
            seconds = capped_timeout(
                timeout,
                DEFAULT_WAIT_S,
                settings.max_timeout_seconds,
                hint="wait again to keep waiting",
            )
            found.wait(seconds, ctx.cancel)
            status = _status(found, ctx)
            if status["status"] == "running":
                status["note"] = (
                    "interrupted while waiting" if ctx.cancel.is_set() else
                    f"still running after {seconds} s"
                )  # fmt: skip
            return {**status, **_new_output(found, ctx)}
        if action == "kill":
            if found.poll() is None:
                ctx.own(ProcessViews).killed.add(found.id)
            found.kill()
            return {**_status(found, ctx), **_new_output(found, ctx)}
        return _write(found, input, eof, ctx)
    except EnvironmentConnectionError as exc:
        raise EnvironmentUnreachable(exc) from None


def _current_end(process: BackgroundProcess) -> int:
    chars = getattr(process, "output_chars", None)
    if isinstance(chars, int):
        return chars
    return process.read_output(0)[1]


# Declared once, as values; the composition root (herald.toolbox) adds them.
TOOLS: tuple[ToolSpec, ...] = (process,)


def register(target: ToolRegistry) -> None:
    """Add these tools to `target` (tests build small registries this way)."""
    target.add(*TOOLS)
