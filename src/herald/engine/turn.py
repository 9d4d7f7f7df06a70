"""One turn from start to end: prologue, iterations, finalize.

`run_turn(ctx)` is what `Agent` runs for every turn, on whatever thread the
caller chose. The prologue runs once (hygiene policy, memory recall, the
user's message on disk, preflight pressure), the iterations loop until an
answer or a stop, and finalize records the end, hands back leftover steer
(closing the turn's queue so nothing pushed later is lost silently) and
starts the background review and curator.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

from herald.engine.hygiene import run_hygiene
from herald.engine.iteration import run_iterations
from herald.engine.pressure import relieve_pressure
from herald.engine.provenance import api_copy, user_provenance
from herald.engine.result import ExitReason, TurnResult
from herald.engine.review import maybe_curate, plan_review, spawn_review
from herald.engine.session import save_meta
from herald.engine.transcript import PersistenceError
from herald.engine.turn_context import TurnContext
from herald.engine.turn_state import TurnState

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Background:
    """Work a turn left running after its reply (the agent waits for it on close)."""

    review: threading.Thread | None = None
    curator: threading.Thread | None = None


def run_turn(ctx: TurnContext, turn: TurnState) -> tuple[TurnResult, Background]:
    try:
        prologue(ctx)
        run_iterations(ctx, turn)
    except PersistenceError as exc:
        log.error("turn stopped: %s", exc)
        turn.end(ExitReason.PERSISTENCE_FAILED, error=str(exc))
    return finalize(ctx, turn)


def prologue(ctx: TurnContext) -> None:
    from herald.memory import api_content_for

    if ctx.options.hygiene is not None:
        run_hygiene(ctx, ctx.options.hygiene)
    ctx.transcript.start_turn()
    text = ctx.user_text
    # Recalled memory rides on this message's API copy, never on the system prompt.
    recall = ctx.memory.begin_turn(text) if ctx.memory is not None else None
    if recall is not None:
        ctx.callbacks.status(recall.indicator)
    # Someone other than the owner (another identity, a webhook) is untrusted: their
    # words are sent fenced, with recall and plugin context outside the fence.
    provenance = user_provenance(ctx.options)
    fenced = api_copy(text, provenance)
    api_content = api_content_for(fenced or text, recall) or fenced
    if ctx.hooks:  # plugin context rides on the API copy too, never on the system prompt
        from herald.plugins.hooks import with_context

        notify = ctx.callbacks.status
        ctx.hooks.session_started(ctx.session_id, notify)
        contexts = ctx.hooks.context_for(notify, user_text=text, session_id=ctx.session_id)
        if contexts:
            api_content = with_context(api_content or text, contexts)
    ctx.transcript.append(
        {"role": "user", "content": text, "provenance": provenance}, api_content=api_content
    )
    relieve_pressure(ctx)  # preflight: a resumed or grown session may be too big


def finalize(ctx: TurnContext, turn: TurnState) -> tuple[TurnResult, Background]:
    if turn.exit_reason == ExitReason.UNKNOWN:  # a bug: every path must name its exit
        log.error("turn ended without a named exit reason")
    log.info(
        "turn ended: %s (api calls %d, tool rounds %d)",
        turn.exit_reason.value,
        turn.api_calls,
        turn.tool_iterations,
    )
    plan = plan_review(ctx.runtime, turn, ctx.user_text) if ctx.make_reviewer else None
    try:
        ctx.store.update_session(ctx.session_id, last_exit_reason=turn.exit_reason.value)
        save_meta(ctx.runtime)
    except Exception as exc:  # the store refused: sqlite error or StateError
        log.error("could not record the end of the turn: %s", exc)
    review = spawn_review(ctx, plan) if plan is not None else None  # after the reply exists
    curator = None
    if turn.exit_reason is ExitReason.TEXT_RESPONSE:
        if ctx.memory is not None:
            ctx.memory.sync_turn(ctx.user_text, turn.final_text)
        curator = maybe_curate(ctx.runtime)
    ctx.hooks.emit(
        "on_turn_complete",
        ctx.callbacks.status,
        session_id=ctx.session_id,
        user_text=ctx.user_text,
        final_text=turn.final_text,
        exit_reason=turn.exit_reason.value,
    )
    result = TurnResult(
        final_text=turn.final_text,
        exit_reason=turn.exit_reason,
        session_id=ctx.session_id,
        messages_added=list(ctx.transcript.added_this_turn),
        api_calls=turn.api_calls,
        usage=turn.usage,
        estimated_cost_usd=turn.cost_usd,
        error=turn.error,
        spend_cap=turn.spend_cap,
        leftover_steer=ctx.steer.close(),
    )
    return result, Background(review, curator)


__all__ = ["Background", "finalize", "prologue", "run_turn"]
