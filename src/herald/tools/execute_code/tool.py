"""The `execute_code` tool: a short Python script that calls Herald's tools.

The script is a command like any other: before it starts it passes the one
command check every command passes (`gate_command`, as ``python3 -c <script>``:
the hard-line floor, which reads inline Python too, then the approval policy,
the unattended allowlist and the sandbox relaxation). Each tool it calls then
goes through the turn's own dispatch path (`ToolContext.nested_tools`), so a
`terminal` call in the script meets the same approval, and a `write_file` the
same write gate, as if the model had called it directly. Only what the script
prints comes back.
"""

from __future__ import annotations

import shlex
from typing import Annotated

from pydantic import Field

from herald.config import HeraldConfig
from herald.environments import EnvironmentConnectionError
from herald.safety.provenance import merge_untrusted
from herald.tools.declare import tool
from herald.tools.execute_code.channel import Limits, RunOutcome, ScriptRun
from herald.tools.registry import ToolArgumentError, ToolContext, ToolResult
from herald.tools.terminal import EnvironmentUnreachable, secret_values, session_environment
from herald.tools.terminal_approval import gate_command

TOOLSET = "execute_code"
# Never callable from a script: itself (no nesting), what needs the model's own turn
# (sub-agents, questions to the user), whatever the config lists.
NEVER_FROM_SCRIPT = frozenset({"execute_code", "delegate_task", "clarify"})
MAX_CODE_CHARS = 50_000

Seconds = Annotated[int, Field(ge=1, strict=True)]


def script_tools(config: HeraldConfig) -> list[str]:
    return [t for t in config.execute_code.tools if t not in NEVER_FROM_SCRIPT]


@tool(toolset=TOOLSET, max_result_chars=250_000)
def execute_code(ctx: ToolContext, code: str, timeout: Seconds | None = None) -> ToolResult:
    """Run a short Python 3 script that calls Herald's tools, and get back only what it
    prints. Use it to make many tool calls in one step (read 20 files, filter, summarise)
    instead of one call per message. In the script, `import herald_tools` and call the
    tools as functions with the same arguments, e.g.
    `herald_tools.read_file(path="a.txt")` returns the tool's text result and raises
    herald_tools.ToolError when the tool refused or failed. Available: read_file,
    write_file, patch, search_files, terminal, web_search, web_extract (those offered in
    this session). The same approvals apply as for direct calls.

    Args:
        code: the Python 3 script; print what you want to see
        timeout: seconds the script may run, not counting time inside tool calls
    """
    if not code.strip():
        raise ToolArgumentError("code must be a non-empty Python script")
    if len(code) > MAX_CODE_CHARS or "\x00" in code:
        raise ToolArgumentError(
            f"code must be at most {MAX_CODE_CHARS} characters of text; keep the script "
            "short and let it read what it needs through herald_tools"
        )
    if ctx.nested_tools is None:
        raise ToolArgumentError(
            "execute_code can only run inside an agent turn (it calls tools through the turn)"
        )
    config = ctx.config or HeraldConfig()
    settings = config.execute_code
    seconds = settings.timeout_seconds if timeout is None else timeout
    if seconds > settings.timeout_seconds:
        raise ToolArgumentError(
            f"timeout must be at most {settings.timeout_seconds} seconds "
            f"(execute_code.timeout_seconds), got {seconds}"
        )
    environment = session_environment(ctx)
    try:
        cwd = environment.cwd
        # The script is checked as the command it is: inline Python run by the interpreter.
        note = gate_command(f"{settings.python} -c {shlex.quote(code)}", ctx, environment, cwd)
        run = ScriptRun(
            environment,
            ctx.nested_tools,
            script_tools(config),
            Limits(seconds, settings.max_output_chars, settings.max_tool_calls),
            ctx.cancel,
            python=settings.python,
        )
        outcome = run.run(code, cwd)
    except EnvironmentConnectionError as exc:
        raise EnvironmentUnreachable(exc) from None
    text = render_outcome(outcome, settings.python, seconds, secret_values(ctx))
    text = f"{note}\n{text}" if note else text
    return ToolResult(text, provenance=merge_untrusted(outcome.provenances))


def render_outcome(outcome: RunOutcome, python: str, seconds: int, secrets: list[str]) -> str:
    from herald.safety import redact

    body = outcome.output.rstrip("\n")
    if outcome.error:
        body = f"{body}\n{outcome.error.rstrip()}" if body else outcome.error.rstrip()
    lines = [redact(body, extra_secrets=secrets)] if body else []
    if outcome.dropped_chars:
        lines.append(
            f"[{outcome.dropped_chars:,} more characters of output were not kept "
            "(execute_code.max_output_chars); print less]"
        )
    if outcome.refused_calls:
        lines.append(f"[{outcome.refused_calls} tool calls over the limit were refused]")
    status = {
        "timeout": f"stopped after {seconds} s (timeout)",
        "interrupted": "stopped: interrupted",
        "protocol": "stopped: the script broke the tool channel",
        "crashed": _crash_text(outcome, python),
    }.get(outcome.stopped or "", "error" if outcome.error else "ok")
    lines.append(f"[{status} · {outcome.tool_calls} tool calls]")
    return "\n".join(lines)


def _crash_text(outcome: RunOutcome, python: str) -> str:
    if outcome.exit_code == 127:
        return f"could not start: {python} was not found in the environment (execute_code.python)"
    return f"the script's process ended without reporting (exit {outcome.exit_code})"


__all__ = ["NEVER_FROM_SCRIPT", "TOOLSET", "execute_code", "script_tools"]
