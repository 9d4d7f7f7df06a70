"""Recording what model calls cost: per-call usage rows, session counters, the turn's
totals, and the token anchor the context engine measures from (invariant 6)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from herald.engine.transcript import PersistenceError
from herald.providers import NormalizedResponse, Usage

if TYPE_CHECKING:
    from herald.engine.ports import TranscriptStore
    from herald.engine.turn_context import TurnContext
    from herald.engine.turn_state import TurnState

# Auxiliary-model calls outside the turn loop: they cost money but are not the
# session's model calls (its `api_calls` counter).
SIDE_JOBS = frozenset({"summary", "judge"})


def _counters(usage: Usage) -> dict[str, int]:
    return {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "cache_read_tokens": usage.cache_read_tokens,
        "cache_write_tokens": usage.cache_write_tokens,
        "reasoning_tokens": usage.reasoning_tokens,
    }


def store_usage(
    store: TranscriptStore,
    session_id: str | None,
    usage: Usage,
    *,
    provider: str,
    model: str,
    api_mode: str,
    kind: str,
    cost: float | None,
    duration_ms: int,
    finish_reason: str | None,
    split: dict[str, Any] | None = None,
) -> None:
    if session_id is None:
        return
    counters = _counters(usage)
    try:
        store.record_usage(
            session_id,
            provider=provider,
            model=model,
            api_mode=api_mode,
            kind=kind,
            cost_usd=cost or 0.0,
            duration_ms=duration_ms,
            finish_reason=finish_reason,
            **(split or {}),
            **counters,
        )
        store.add_session_usage(
            session_id,
            api_calls=0 if kind in SIDE_JOBS else 1,
            cost_usd=cost or 0.0,
            **counters,
        )
    except Exception as exc:  # the store refused: sqlite error or StateError
        raise PersistenceError(f"could not record usage: {exc}") from exc


def record_main_usage(
    ctx: TurnContext, turn: TurnState, response: NormalizedResponse, *, duration_ms: int
) -> None:
    from herald.providers import estimate_cost

    usage = response.usage or Usage()
    turn.usage = turn.usage + usage
    provider, model = ctx.client.identity()
    cost = estimate_cost(provider, model, usage, ctx.config)
    turn.add_cost(cost)
    ctx.context_engine.update_from_response(usage)
    # The reply is appended next: the anchor covers everything sent plus it.
    ctx.accountant.record(
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
        message_count=len(ctx.transcript.messages) + 1,
    )
    store_usage(
        ctx.store,
        ctx.session.id,
        usage,
        provider=provider,
        model=model,
        api_mode=ctx.client.endpoint.api_mode,
        # A child session's calls (a background review, a sub-agent) show as its own kind.
        kind="main" if ctx.options.parent_session_id is None else ctx.options.source,
        cost=cost,
        duration_ms=duration_ms,
        finish_reason=response.finish_reason,
        split=turn.request_split.columns() if turn.request_split is not None else None,
    )
