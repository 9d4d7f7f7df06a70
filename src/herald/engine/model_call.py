"""One model call with its inner retry loop, driven by `classify_error`.

For every failure the classifier gives one `Recovery`: ask again, compress,
back off and retry, another credential, the next model in the fallback chain —
or stop, in which case the turn ends with the exit reason of the classified
failure and the provider's own (redacted) words. When a failed attempt had
already streamed text, the surface is told to discard it (`on_stream_discard`)
before anything else happens.
Every retry that reaches the provider costs an iteration; a retry that found
the budget empty ends as `error_near_max_iterations`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from herald.engine.callbacks import TurnCallbacks
from herald.engine.pressure import compress_history
from herald.engine.result import ExitReason
from herald.engine.spend import before_model_call
from herald.engine.turn_state import TurnState
from herald.engine.usage import record_main_usage
from herald.providers import (
    CallCancelled,
    ClassifiedError,
    FailoverReason,
    NormalizedResponse,
    ProviderError,
    Recovery,
    StreamDelta,
)

if TYPE_CHECKING:
    from herald.engine.turn_context import TurnContext

log = logging.getLogger(__name__)

# How a turn ends when nothing can recover a failed call, by classified reason;
# reasons that were retried until the retries ran out end as ALL_RETRIES_EXHAUSTED.
_STOPPED_BY: dict[FailoverReason, ExitReason] = {
    FailoverReason.AUTH: ExitReason.AUTH_FAILED,
    FailoverReason.AUTH_PERMANENT: ExitReason.AUTH_FAILED,
    FailoverReason.BILLING: ExitReason.OUT_OF_CREDIT,
    FailoverReason.MODEL_NOT_FOUND: ExitReason.MODEL_NOT_FOUND,
    FailoverReason.INVALID_REQUEST: ExitReason.INVALID_REQUEST,
    FailoverReason.CONTENT_POLICY: ExitReason.CONTENT_POLICY_BLOCKED,
    FailoverReason.TLS_CERTIFICATE: ExitReason.TLS_FAILED,
    FailoverReason.MISSING_DEPENDENCY: ExitReason.MISSING_EXTRA,
    FailoverReason.CONTEXT_OVERFLOW: ExitReason.CONTEXT_OVERFLOW_UNRECOVERABLE,
    FailoverReason.PAYLOAD_TOO_LARGE: ExitReason.CONTEXT_OVERFLOW_UNRECOVERABLE,
    FailoverReason.UNKNOWN: ExitReason.MODEL_CALL_FAILED,
}

# Answers the model did not finish: the turn ends with the reason, text kept as partial.
_CUT_SHORT: dict[str, tuple[ExitReason, str]] = {
    "length": (
        ExitReason.OUTPUT_TRUNCATED,
        "the answer was cut off at the model's output limit (model.max_tokens); "
        "the text is partial",
    ),
    "content_filter": (
        ExitReason.CONTENT_POLICY_BLOCKED,
        "the provider's content filter stopped the answer; the text is partial",
    ),
}


@dataclass
class CallOutcome:
    response: NormalizedResponse | None = None
    exit_reason: ExitReason | None = None
    error: str | None = None


class _AttemptSink:
    """Forwards one attempt's deltas to the surface and remembers whether any
    text reached it, so a failed attempt can be discarded there."""

    def __init__(self, callbacks: TurnCallbacks):
        self.callbacks = callbacks
        self.streamed = False

    def __call__(self, delta: StreamDelta) -> None:
        cb = self.callbacks
        if delta.kind == "text" and cb.on_text_delta is not None:
            self.streamed = True
            cb.on_text_delta(delta.text)
        elif delta.kind == "reasoning" and cb.on_reasoning_delta is not None:
            self.streamed = True
            cb.on_reasoning_delta(delta.text)


def _delta_sink(ctx: TurnContext) -> _AttemptSink | None:
    cb = ctx.callbacks
    if cb.on_text_delta is None and cb.on_reasoning_delta is None:
        return None
    return _AttemptSink(cb)


def failure_text(classified: ClassifiedError) -> str:
    """The classifier's sentence plus the provider's own words, redacted."""
    from herald.safety import redact

    detail = redact(classified.detail.strip())
    if not detail or detail == classified.user_message:
        return classified.user_message
    return f"{classified.user_message}: {detail}"


def _cut_short(response: NormalizedResponse) -> CallOutcome:
    cut = _CUT_SHORT.get(response.finish_reason or "")
    if cut is None or response.tool_calls or not response.text:
        return CallOutcome(response=response)
    return CallOutcome(response=response, exit_reason=cut[0], error=cut[1])


def call_model(
    ctx: TurnContext,
    turn: TurnState,
    build_messages: Callable[[], list[dict[str, Any]]],
    tools: list[dict[str, Any]] | None,
) -> CallOutcome:
    """Call the model until it answers or nothing can help. The caller has already
    charged the budget for the first attempt. A response cut short (output limit,
    content filter) comes back with its exit reason set."""
    from herald.providers import backoff_delay, classify_error, sleep_interruptible

    cfg = ctx.config.agent
    retries = 0
    empty_responses = 0
    compressed = False
    while True:
        if ctx.cancel.is_set():
            return CallOutcome(exit_reason=ExitReason.INTERRUPTED_DURING_API_CALL)
        started = time.monotonic()
        sink = _delta_sink(ctx)
        try:
            messages = build_messages()
            request = ctx.client.build_request(messages, tools)
            if (refused := before_model_call(ctx, turn, messages, tools)) is not None:
                turn.budget.refund()  # invariant 15: checked before the call, never sent
                return CallOutcome(exit_reason=ExitReason.SPEND_LIMIT_REACHED, error=refused)
            settings = ctx.client.settings()
            turn.api_calls += 1
            response = ctx.client.call(
                request, stream=settings.stream, on_delta=sink, cancel=ctx.cancel
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
            if sink is not None and sink.streamed:
                ctx.callbacks.stream_discard()  # that text is not part of any answer
            classified = classify_error(exc)
            reason = classified.reason
            log.warning("model call failed (%s): %s", reason, exc)
            detail = classified.user_message
            stop = CallOutcome(
                exit_reason=_STOPPED_BY.get(reason, ExitReason.MODEL_CALL_FAILED),
                error=failure_text(classified),
            )

            match classified.recovery:
                case Recovery.ASK_AGAIN:
                    empty_responses += 1
                    if empty_responses > cfg.empty_response_retries:
                        return CallOutcome(
                            exit_reason=ExitReason.EMPTY_RESPONSE_EXHAUSTED,
                            error=f"the model returned {empty_responses} empty responses in a row",
                        )
                    ctx.callbacks.status("the model returned nothing; asking again")
                case Recovery.COMPRESS:
                    if compressed or not compress_history(ctx, force=True, reason="fit"):
                        return stop
                    compressed = True
                    turn.budget.refund()  # the retry after compression is free
                    ctx.callbacks.status("context was too long; compressed and retrying")
                case Recovery.STOP:
                    return stop
                case Recovery.ROTATE | Recovery.FALL_BACK | Recovery.RETRY as plan:
                    if classified.should_rotate_credential and ctx.client.rotate_credential(
                        classified
                    ):
                        ctx.callbacks.status(f"{detail}; switched to another API key")
                    elif plan is not Recovery.RETRY and ctx.client.fall_back(classified):
                        provider, model = ctx.client.identity()
                        ctx.callbacks.status(f"{detail}; falling back to {provider}:{model}")
                        retries = 0
                    elif plan is not Recovery.RETRY:
                        return stop
                    elif retries < cfg.max_retries:
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
                    elif ctx.client.fall_back(classified):
                        provider, model = ctx.client.identity()
                        ctx.callbacks.status(f"{detail}; falling back to {provider}:{model}")
                        retries = 0
                    else:
                        return CallOutcome(
                            exit_reason=ExitReason.ALL_RETRIES_EXHAUSTED,
                            error=failure_text(classified),
                        )

            if not turn.budget.try_consume():
                return CallOutcome(
                    exit_reason=ExitReason.ERROR_NEAR_MAX_ITERATIONS,
                    error=f"{failure_text(classified)}; no iterations left to retry",
                )
            continue
        record_main_usage(ctx, turn, response, duration_ms=int((time.monotonic() - started) * 1000))
        return _cut_short(response)
