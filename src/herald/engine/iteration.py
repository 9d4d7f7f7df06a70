"""The iteration loop: gates, model call, intake, tool round — until a text answer."""

from __future__ import annotations

from typing import TYPE_CHECKING

from herald.engine.intake import take_response
from herald.engine.model_call import call_model
from herald.engine.pressure import relieve_pressure
from herald.engine.request import BUDGET_SUMMARY_REQUEST, request_messages
from herald.engine.result import ExitReason
from herald.engine.tool_round import run_tool_round
from herald.engine.turn_state import TurnState
from herald.tools import GuardrailController, resolve_hard_stop

if TYPE_CHECKING:
    from herald.engine.turn_context import TurnContext


def new_guardrail_controller(ctx: TurnContext) -> GuardrailController:
    config = ctx.config.guardrails
    hard_stop = resolve_hard_stop(
        config, ctx.options.source, has_approver=ctx.tool_context.approve is not None
    )
    return GuardrailController(config=config, hard_stop=hard_stop)


def run_iterations(ctx: TurnContext, turn: TurnState) -> None:
    guard = new_guardrail_controller(ctx)  # counts are per turn
    build = lambda: request_messages(ctx)  # noqa: E731 - rebuilt for every attempt
    while True:
        if ctx.cancel.is_set():
            turn.end(ExitReason.INTERRUPTED_BY_USER)
            return
        if not turn.budget.try_consume():
            summarise_on_budget(ctx, turn)
            return
        # Pressure check before every request: after the prologue's check this is
        # the check that follows each tool batch.
        relieve_pressure(ctx)
        # Read for every call: a tool_search may have appended schemas to the array.
        outcome = call_model(ctx, turn, build, ctx.tools.request_tools())
        if outcome.response is None:
            turn.end(outcome.exit_reason or ExitReason.UNKNOWN, error=outcome.error)
            return
        response = outcome.response
        take_response(ctx.transcript, response)
        ctx.hooks.emit(
            "post_llm_call",
            ctx.callbacks.status,
            session_id=ctx.session_id,
            text=response.text or "",
            tool_calls=[call.name for call in response.tool_calls],
        )
        if not response.tool_calls:
            # A cut-short answer (output limit, content filter) ends with its reason.
            reason = outcome.exit_reason or ExitReason.TEXT_RESPONSE
            turn.end(reason, text=response.text or "", error=outcome.error)
            return
        turn.tool_iterations += 1
        round_outcome = run_tool_round(ctx, response.tool_calls, guard)
        if round_outcome.interrupted:
            turn.end(ExitReason.INTERRUPTED_BY_USER)
            return
        if round_outcome.halt is not None:
            ctx.callbacks.status("stopped: the same tool calls kept failing or repeating")
            turn.end(ExitReason.GUARDRAIL_HALT, error=round_outcome.halt.message)
            return


def summarise_on_budget(ctx: TurnContext, turn: TurnState) -> None:
    """The budget ran out with no answer: one last tool-less call for a progress summary."""
    reason = (
        ExitReason.BUDGET_EXHAUSTED
        if turn.budget.exhausted_by() == "parent"
        else ExitReason.MAX_ITERATIONS_REACHED
    )
    ctx.callbacks.status("iteration budget used up; asking the model for a summary")
    ctx.transcript.append({"role": "user", "content": BUDGET_SUMMARY_REQUEST})
    outcome = call_model(ctx, turn, lambda: request_messages(ctx), None)
    if outcome.response is None:
        if outcome.exit_reason == ExitReason.INTERRUPTED_DURING_API_CALL:
            reason = outcome.exit_reason
        turn.end(reason, error=outcome.error or "the summary call failed")
        return
    outcome.response.tool_calls = []  # no tools were offered; a stray call would dangle
    take_response(ctx.transcript, outcome.response)
    turn.end(reason, text=outcome.response.text or "")
