"""One run of a script: start the runner in the environment, answer its tool calls
over the process's own pipes, enforce the limits, and collect what it printed.

The runner (``runner.py``) is sent over stdin, so nothing needs installing where
the script runs and the channel exists on every backend that can spawn a
process with pipes (local, bwrap, docker and ssh alike). Frames from the
script carry a per-run random nonce; anything else on the process's output
(a child process printing straight to the pipe) is kept as the script's
output too. Each call the script makes goes to `NestedTools.call`, the turn's
own dispatch path; the runner never sees anything but the result text.
"""

from __future__ import annotations

import json
import secrets
import shlex
import threading
import time
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from herald.environments import BackgroundProcess, Environment
from herald.tools.ports import NestedTools
from herald.tools.registry import ERROR_PREFIX

_POLL_S = 0.005
# After the final frame, how long the process gets to exit by itself before it is killed.
_EXIT_GRACE_S = 2.0
# A single frame larger than this ends the run (a script cannot make Herald buffer
# without bound; a write_file call with a few MB of content still fits).
MAX_FRAME_CHARS = 8_000_000


@dataclass(frozen=True)
class Limits:
    timeout_seconds: float
    max_output_chars: int
    max_tool_calls: int


@dataclass
class RunOutcome:
    output: str = ""
    dropped_chars: int = 0
    error: str | None = None
    tool_calls: int = 0
    refused_calls: int = 0  # calls past the limit
    exit_code: int | None = None
    stopped: str | None = None  # "timeout" | "interrupted" | "crashed" | "protocol"
    calls_by_tool: dict[str, int] = field(default_factory=dict)
    # The provenance of every result the script saw: what it prints may repeat any of
    # them, so the run's output is as untrusted as the least trusted result.
    provenances: list[str] = field(default_factory=list)


def runner_source() -> str:
    return resources.files(__package__).joinpath("runner.py").read_text(encoding="utf-8")


def bootstrap_command(python: str) -> str:
    """The command the environment runs: a Python that reads the runner and its
    inputs from the first line of stdin and executes it."""
    code = (
        "import sys,json;B=json.loads(sys.stdin.readline());"
        'exec(compile(B.pop("runner"),"herald_runner","exec"),'
        '{"__name__":"herald_runner","BOOT":B})'
    )
    return f"exec {shlex.quote(python)} -u -c {shlex.quote(code)}"


def tool_stubs(tools: NestedTools, allowed: list[str]) -> list[dict[str, Any]]:
    """What the generated `herald_tools` module offers: each allowed tool this turn
    offers, its arguments in declaration order (required ones first)."""
    offered = set(tools.names())
    stubs = []
    for name in allowed:
        if name not in offered:
            continue
        definition = tools.definition(name) or {}
        parameters = definition.get("parameters") or {}
        props = list((parameters.get("properties") or {}).keys())
        required = [p for p in parameters.get("required") or [] if p in props]
        order = required + [p for p in props if p not in required]
        stubs.append({"name": name, "params": order, "doc": definition.get("description", "")})
    return stubs


class ScriptRun:
    def __init__(
        self,
        environment: Environment,
        tools: NestedTools,
        allowed: list[str],
        limits: Limits,
        cancel: threading.Event,
        python: str = "python3",
    ) -> None:
        self.environment = environment
        self.tools = tools
        self.stubs = tool_stubs(tools, allowed)
        self.allowed = {s["name"] for s in self.stubs}
        self.limits = limits
        self.cancel = cancel
        self.python = python
        self.nonce = secrets.token_hex(16)
        self.outcome = RunOutcome()
        self._printed: list[str] = []  # in order: the script's prints and its children's
        self._stray_chars = 0

    def run(self, code: str, cwd: str) -> RunOutcome:
        process = self.environment.spawn(bootstrap_command(self.python), cwd=cwd)
        try:
            boot = {
                "runner": runner_source(),
                "nonce": self.nonce,
                "script": code,
                "tools": self.stubs,
                "max_output_chars": self.limits.max_output_chars,
            }
            process.write_stdin(json.dumps(boot) + "\n")
            self._drive(process)
        except (BrokenPipeError, TimeoutError, OSError):
            if self.outcome.stopped is None and self.outcome.error is None:
                self.outcome.stopped = "crashed"
        finally:
            process.kill()  # the whole process group: children of the script too
            self.outcome.exit_code = process.poll()
        self.outcome.output = "".join(self._printed)
        return self.outcome

    # -- the loop -----------------------------------------------------------------

    def _drive(self, process: BackgroundProcess) -> None:
        mark = "\x1e" + self.nonce + " "
        offset, buffer = 0, ""
        budget = self.limits.timeout_seconds  # seconds of script time left
        last = time.monotonic()
        done_at: float | None = None
        while True:
            now = time.monotonic()
            budget -= now - last
            last = now
            if self.cancel.is_set():
                self.outcome.stopped = "interrupted"
                return
            if budget <= 0 and done_at is None:
                self.outcome.stopped = "timeout"
                return
            exited = process.poll() is not None
            if exited:  # the reader may still hold the last lines: let it finish first
                process.wait(0)
            text, offset = process.read_output(offset)
            if text:
                buffer += text
                buffer, finished = self._consume(buffer, mark, process)
                last = time.monotonic()  # time inside tool calls is not the script's
                if finished and done_at is None:
                    done_at = time.monotonic()
            if exited and not text:
                if buffer:
                    self._keep_stray(buffer)
                if done_at is None and self.outcome.stopped is None:
                    self.outcome.stopped = "crashed"
                return
            if done_at is not None and time.monotonic() - done_at > _EXIT_GRACE_S:
                return
            if len(buffer) > MAX_FRAME_CHARS:
                self.outcome.stopped = "protocol"
                return
            time.sleep(_POLL_S)

    def _consume(self, buffer: str, mark: str, process: BackgroundProcess) -> tuple[str, bool]:
        """Handle every complete frame in `buffer`; returns what is left and whether the
        final frame came."""
        finished = False
        while True:
            start = buffer.find(mark)
            if start < 0:
                # Keep a possible partial mark at the end; the rest is a child's output.
                keep = max(0, len(buffer) - len(mark))
                cut = buffer.rfind("\n", 0, keep) + 1
                self._keep_stray(buffer[:cut])
                return buffer[cut:], finished
            end = buffer.find("\n", start)
            if end < 0:
                self._keep_stray(buffer[:start].removesuffix("\n"))
                return buffer[start:], finished
            self._keep_stray(buffer[:start].removesuffix("\n"))
            frame = buffer[start + len(mark) : end]
            buffer = buffer[end + 1 :]
            try:
                message = json.loads(frame)
            except json.JSONDecodeError:
                self.outcome.stopped = "protocol"
                return "", True
            if "out" in message:
                self._printed.append(str(message["out"]))
            elif message.get("done"):
                self.outcome.dropped_chars += int(message.get("dropped") or 0)
                self.outcome.error = message.get("error")
                finished = True
            elif "call" in message:
                process.write_stdin(json.dumps(self._answer(message)) + "\n")

    def _answer(self, message: dict[str, Any]) -> dict[str, Any]:
        number = message.get("call")
        name = str(message.get("tool") or "")
        args = message.get("args")
        if self.outcome.tool_calls >= self.limits.max_tool_calls:
            self.outcome.refused_calls += 1
            return _reply(
                number,
                False,
                f"{name} was not run: this script already made {self.limits.max_tool_calls} "
                "tool calls, the limit per run (execute_code.max_tool_calls)",
            )
        if name not in self.allowed:
            known = ", ".join(sorted(self.allowed)) or "none"
            return _reply(
                number, False, f"{name!r} cannot be called from a script; it can call: {known}"
            )
        if not isinstance(args, dict):
            return _reply(number, False, f"{name}: the arguments must be keyword arguments")
        self.outcome.tool_calls += 1
        self.outcome.calls_by_tool[name] = self.outcome.calls_by_tool.get(name, 0) + 1
        result = self.tools.call(name, args)
        if result.provenance:
            self.outcome.provenances.append(result.provenance)
        if result.is_error:  # the script's exception says what went wrong, no marker
            return _reply(number, False, result.content.removeprefix(ERROR_PREFIX).lstrip())
        return _reply(number, True, result.content)

    def _keep_stray(self, text: str) -> None:
        if not text:
            return
        room = self.limits.max_output_chars - self._stray_chars
        if room > 0:
            self._printed.append(text[:room])
            self._stray_chars += min(room, len(text))
        self.outcome.dropped_chars += max(0, len(text) - max(room, 0))


def _reply(number: Any, ok: bool, result: str) -> dict[str, Any]:
    return {"call": number, "ok": ok, "result": result}
