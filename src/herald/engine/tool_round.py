"""Run the tool calls of one assistant message and record their results.

The calls are split by `plan_tool_batch` into segments, in the model's order.
A sequential segment runs one call at a time and persists each result as soon
as it exists; a parallel segment runs its calls in a thread pool (each worker
in a copy of the caller's context variables) and persists the results in call
order once every worker is done. The assistant message is already on disk
before any of this starts (intake).

Every call gets exactly one result (invariant 3): an interrupt is checked
before and after every sequential tool and before every worker starts, and
reaches running tools through `ToolContext.cancel`; calls that never ran get
a "cancelled" result, as do calls skipped after a guardrail halt. Each result
is shown to the guardrail controller; a warning rides on that result's API
copy, a halt ends the turn after the round. Queued steer rides on the last
result of the round.
"""

from __future__ import annotations

import contextvars
import itertools
import json
import logging
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from herald.engine.images import remember_tool_images
from herald.engine.oversize import cut_tool_result, tool_result_cap
from herald.engine.provenance import api_copy, result_provenance
from herald.engine.repair import CANCELLED_RESULT, tool_result_message
from herald.engine.steer import attach_steer
from herald.engine.taint_gate import taint_gate
from herald.providers import ToolCall
from herald.tools import (
    PARALLEL,
    GuardrailController,
    GuardrailDecision,
    ToolResult,
    ToolSpec,
    attach_guardrail,
    plan_tool_batch,
    sanitize_error,
)

if TYPE_CHECKING:
    from herald.engine.turn_context import TurnContext

log = logging.getLogger(__name__)

MAX_PARALLEL_WORKERS = 8
GUARDRAIL_SKIPPED_RESULT = "[skipped: the turn was stopped by a guardrail before this tool ran]"


@dataclass
class RoundOutcome:
    interrupted: bool = False
    halt: GuardrailDecision | None = None  # set when a guardrail stopped the turn


def _run_one(ctx: TurnContext, call: ToolCall) -> ToolResult:
    if call.name not in ctx.tools.names:
        available = ", ".join(ctx.tools.names) or "none"
        return ToolResult(
            sanitize_error(f"tool {call.name!r} is not available here; available: {available}"),
            True,
        )
    cb = ctx.callbacks
    if cb.on_tool_start is not None:
        cb.on_tool_start(call.name, call.arguments)
    # The taint check belongs to the approval step: before the tool (and its own gates)
    # runs, a control value taken from untrusted content needs the owner (invariant 18).
    refused = taint_gate(ctx, call)
    result = refused if refused is not None else _dispatch_with_hooks(ctx, call)
    if cb.on_tool_end is not None:
        cb.on_tool_end(call.name, result.content, result.is_error)
    return result


def _dispatch_with_hooks(ctx: TurnContext, call: ToolCall) -> ToolResult:
    """The plugins' pre_tool_call hooks may refuse a call (the model is told why); they
    cannot approve one — the approval layer runs inside the tool, after them."""
    if not ctx.hooks:
        return ctx.tools.dispatch(call.name, call.arguments, ctx.tool_context)
    from herald.tools import parse_arguments

    try:
        args = parse_arguments(call.arguments)
    except ValueError:
        args = {}
    denial = ctx.hooks.tool_denial(call.name, args, ctx.callbacks.status)
    if denial is not None:
        ctx.callbacks.status(f"{call.name}: {denial}")
        result = ToolResult(sanitize_error(f"{call.name} was not run: {denial}"), True)
    else:
        result = ctx.tools.dispatch(call.name, call.arguments, ctx.tool_context)
    ctx.hooks.emit(
        "post_tool_call",
        ctx.callbacks.status,
        name=call.name,
        args=args,
        result=result.content,
        is_error=result.is_error,
    )
    return result


class NestedToolCalls:
    """This turn's tools for a tool that calls others on the model's behalf (the
    `herald.tools.NestedTools` port, on `ToolContext.nested_tools`). A nested call runs
    through `_run_one`, the path of a call in the model's own message: only tools this
    turn offers, the plugins' pre/post hooks, then `ToolView.dispatch` (registry hooks,
    checkpoint, the tool's own approval and write gates, with this turn's humans or none).
    The surface sees each nested call start and end like any other."""

    _ids = itertools.count(1)

    def __init__(self, ctx: TurnContext) -> None:
        self._ctx = ctx

    def names(self) -> tuple[str, ...]:
        return self._ctx.tools.names

    def definition(self, name: str) -> dict[str, Any] | None:
        spec = self._ctx.tools.spec(name)
        return spec.definition()["function"] if spec is not None else None

    def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        if self._ctx.cancel.is_set():
            return ToolResult(sanitize_error(f"{name} was not run: the turn was interrupted"), True)
        call = ToolCall(id=f"nested_{next(self._ids)}", name=name, arguments=json.dumps(arguments))
        try:
            return _run_one(self._ctx, call)
        except Exception as exc:  # a surface callback failed: the call still gets a result
            return _Round._failed(call, exc)


class _Round:
    def __init__(self, ctx: TurnContext, calls: list[ToolCall], guard: GuardrailController | None):
        self.ctx = ctx
        self.calls = calls
        self.guard = guard
        self.outcome = RoundOutcome()
        self.recorded = 0
        self.cap: int | None = None  # characters each result may keep (set when run)

    @property
    def stopped(self) -> bool:
        return self.outcome.interrupted or self.outcome.halt is not None

    def check_interrupt(self) -> None:
        if self.ctx.cancel.is_set():
            self.outcome.interrupted = True

    def spec(self, name: str) -> ToolSpec | None:
        return self.ctx.tools.spec(name)

    def planning_cwd(self) -> str:
        """Where relative paths point: the environment's directory once one is attached
        (that is what the file tools resolve against), else the session's cwd."""
        environment = self.ctx.tool_context.environment
        if environment is not None:
            try:
                return environment.cwd
            except Exception:  # an unreachable remote: plan with the session's cwd
                log.debug("environment cwd unavailable", exc_info=True)
        return self.ctx.options.cwd

    # ---- running --------------------------------------------------------------------------

    def run(self) -> RoundOutcome:
        self.cap = tool_result_cap(self.ctx, len(self.calls))
        segments = plan_tool_batch(self.calls, self.planning_cwd(), self.spec)
        for kind, members in segments:
            if kind == PARALLEL and not self.stopped:
                self.run_parallel(members)
            else:
                for call in members:
                    self.run_sequential(call)
        return self.outcome

    def run_sequential(self, call: ToolCall) -> None:
        self.check_interrupt()
        if self.stopped:
            self.record(call, None)
            return
        try:
            result = _run_one(self.ctx, call)
        except Exception as exc:  # a surface callback failed: the call still gets a result
            result = self._failed(call, exc)
        self.check_interrupt()
        self.record(call, result)

    def run_parallel(self, members: list[ToolCall]) -> None:
        futures: list[Future[ToolResult | None] | None] = []
        workers = min(MAX_PARALLEL_WORKERS, len(members))
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="herald-tool") as pool:
            for call in members:
                if self.ctx.cancel.is_set():
                    futures.append(None)
                    continue
                context = contextvars.copy_context()  # one per worker: a context runs in one thread
                futures.append(pool.submit(context.run, self._worker, call))
            results = [self._collect(call, f) for call, f in zip(members, futures, strict=True)]
        self.check_interrupt()
        for call, result in zip(members, results, strict=True):
            self.record(call, result)

    def _worker(self, call: ToolCall) -> ToolResult | None:
        if self.ctx.cancel.is_set():
            return None  # the interrupt came before this worker started
        return _run_one(self.ctx, call)

    @staticmethod
    def _collect(call: ToolCall, future: Future[ToolResult | None] | None) -> ToolResult | None:
        if future is None:
            return None
        try:
            return future.result()
        except Exception as exc:  # a callback or the pool failed: the call still gets a result
            return _Round._failed(call, exc)

    @staticmethod
    def _failed(call: ToolCall, exc: Exception) -> ToolResult:
        log.error("tool call %s failed outside its handler", call.name, exc_info=exc)
        return ToolResult(
            sanitize_error(f"{call.name} could not run: {type(exc).__name__}: {exc}"), True
        )

    # ---- recording ------------------------------------------------------------------------

    def record(self, call: ToolCall, result: ToolResult | None) -> None:
        """Persist the call's result; None means the call never ran."""
        notes: list[str] = []
        provenance = result_provenance(result)
        if result is None:
            content = (
                GUARDRAIL_SKIPPED_RESULT
                if self.outcome.halt is not None and not self.outcome.interrupted
                else CANCELLED_RESULT
            )
        else:
            content = result.content
            if self.cap is not None:
                content = cut_tool_result(self.ctx, call.id, content, self.cap)
            notes = self._observe(call, result)
        self.recorded += 1
        is_last = self.recorded == len(self.calls)
        # Untrusted output is fenced first; Herald's own notes ride outside the fence.
        api_content = api_copy(content, provenance)
        for note in notes:
            api_content = attach_guardrail(api_content or content, note)
        if is_last and not self.stopped:
            steer = self.ctx.steer.drain()
            if steer:
                api_content = attach_steer(api_content or content, steer)
        message = tool_result_message(call.id, call.name, content)
        if provenance is not None:
            message = message.evolve(provenance=provenance)
        stored = self.ctx.transcript.append(message, api_content=api_content)
        if result is not None and result.images:
            remember_tool_images(self.ctx, stored, result.images, call.name, provenance)

    def _observe(self, call: ToolCall, result: ToolResult) -> list[str]:
        if self.guard is None or self.outcome.halt is not None:
            return []
        spec = self.spec(call.name)
        decision = self.guard.observe(
            call.name,
            call.arguments,
            result.content,
            is_error=result.is_error,
            read_only=spec is not None and spec.read_only,
        )
        if decision.action == "ok" or decision.message is None:
            return []
        level = logging.WARNING if decision.halt else logging.INFO
        log.log(level, "guardrail %s on %s: %s", decision.action, call.name, decision.message)
        if decision.halt:
            self.outcome.halt = decision
        return [decision.message]


def run_tool_round(
    ctx: TurnContext, calls: list[ToolCall], guard: GuardrailController | None = None
) -> RoundOutcome:
    """Run `calls` and persist one result for each, in call order."""
    return _Round(ctx, calls, guard).run()
