"""One model call with its inner retry loop, driven by `classify_error`.

For every failure the classifier says what helps: another credential, the
next model in the fallback chain, a backoff and retry, a compression — or
nothing, in which case the turn ends with the matching named exit reason.
Every retry that reaches the provider costs an iteration; a retry that found
the budget empty ends as `error_near_max_iterations`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from herald.engine.pressure import compress_history
from herald.engine.result import ExitReason
from herald.engine.spend import before_model_call
from herald.engine.turn_state import TurnState
from herald.engine.usage import record_main_usage
from herald.providers import CallCancelled, NormalizedResponse, ProviderError, StreamDelta

if TYPE_CHECKING:
    from herald.engine.turn_context import TurnContext

log = logging.getLogger(__name__)

# Reasons for which nothing but a different request could help.
_OVERFLOW_REASONS = {"context_overflow", "payload_too_large"}


@dataclass
class CallOutcome:
    response: NormalizedResponse | None = None
    exit_reason: ExitReason | None = None
    error: str | None = None


def _delta_sink(ctx: TurnContext) -> Callable[[StreamDelta], None] | None:
    cb = ctx.callbacks
    if cb.on_text_delta is None and cb.on_reasoning_delta is None:
        return None

    def sink(delta: StreamDelta) -> None:
        if delta.kind == "text" and cb.on_text_delta is not None:
            cb.on_text_delta(delta.text)
        elif delta.kind == "reasoning" and cb.on_reasoning_delta is not None:
            cb.on_reasoning_delta(delta.text)

    return sink


def call_model(
    ctx: TurnContext,
    turn: TurnState,
    build_messages: Callable[[], list[dict[str, Any]]],
    tools: list[dict[str, Any]] | None,
) -> CallOutcome:
    """Call the model until it answers or nothing can help. The caller has already
    charged the budget for the first attempt."""
    from herald.providers import backoff_delay, classify_error, sleep_interruptible

    cfg = ctx.config.agent
    retries = 0
    empty_responses = 0
    compressed = False
    while True:
        if ctx.cancel.is_set():
            return CallOutcome(exit_reason=ExitReason.INTERRUPTED_DURING_API_CALL)
        started = time.monotonic()
        try:
            messages = build_messages()
            request = ctx.client.build_request(messages, tools)
            if (refused := before_model_call(ctx, turn, messages, tools)) is not None:
                turn.budget.refund()  # invariant 15: checked before the call, never sent
                return CallOutcome(exit_reason=ExitReason.SPEND_LIMIT_REACHED, error=refused)
            settings = ctx.client.settings()
            turn.api_calls += 1
            response = ctx.client.call(
                request,
                stream=settings.stream,
                on_delta=_delta_sink(ctx),
                cancel=ctx.cancel,
            )
            if response.is_empty:
                raise ProviderError(
                    "the model returned an empty response",
                    provider=ctx.client.identity()[0],
                    kind="empty_response",
                )
        except CallCancelled:
            return CallOutcome(exit_reason=ExitReason.INTERRUPTED_DURING_API_CALL)
        except Exception as exc:
            classified = classify_error(exc)
            reason = str(classified.reason)
            log.warning("model call failed (%s): %s", reason, exc)
            detail = classified.user_message

            if reason == "empty_response":
                empty_responses += 1
                if empty_responses > cfg.empty_response_retries:
                    return CallOutcome(
                        exit_reason=ExitReason.EMPTY_RESPONSE_EXHAUSTED,
                        error=f"the model returned {empty_responses} empty responses in a row",
                    )
                ctx.callbacks.status("the model returned nothing; asking again")
            elif reason == "content_policy":
                return CallOutcome(exit_reason=ExitReason.CONTENT_POLICY_BLOCKED, error=detail)
            elif classified.should_compress or reason in _OVERFLOW_REASONS:
                if not compressed and compress_history(ctx, force=True):
                    compressed = True
                    turn.budget.refund()  # the retry after compression is free
                    ctx.callbacks.status("context was too long; compressed and retrying")
                else:
                    return CallOutcome(
                        exit_reason=ExitReason.CONTEXT_OVERFLOW_UNRECOVERABLE, error=detail
                    )
            elif classified.should_rotate_credential and ctx.client.rotate_credential(classified):
                ctx.callbacks.status(f"{detail}; switched to another API key")
            elif classified.should_fallback and ctx.client.fall_back(classified):
                provider, model = ctx.client.identity()
                ctx.callbacks.status(f"{detail}; falling back to {provider}:{model}")
                retries = 0
            elif classified.retryable and retries < cfg.max_retries:
                retries += 1
                delay = backoff_delay(
                    retries,
                    base=cfg.retry_base_delay,
                    cap=cfg.retry_max_delay,
                    retry_after=classified.retry_after,
                )
                ctx.callbacks.status(
                    f"{detail}; retrying in {delay:.0f} s ({retries}/{cfg.max_retries})"
                )
                if not sleep_interruptible(delay, ctx.cancel):
                    return CallOutcome(exit_reason=ExitReason.INTERRUPTED_DURING_API_CALL)
            elif classified.retryable and ctx.client.fall_back(classified):
                provider, model = ctx.client.identity()
                ctx.callbacks.status(f"{detail}; falling back to {provider}:{model}")
                retries = 0
            else:
                return CallOutcome(exit_reason=ExitReason.ALL_RETRIES_EXHAUSTED, error=detail)

            if not turn.budget.try_consume():
                return CallOutcome(
                    exit_reason=ExitReason.ERROR_NEAR_MAX_ITERATIONS,
                    error=f"{detail}; no iterations left to retry",
                )
            continue
        record_main_usage(ctx, turn, response, duration_ms=int((time.monotonic() - started) * 1000))
        return CallOutcome(response=response)
