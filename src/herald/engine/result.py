"""What a turn returns, and the named reason it ended."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

from herald.providers import Usage


class ExitReason(StrEnum):
    TEXT_RESPONSE = "text_response"
    INTERRUPTED_BY_USER = "interrupted_by_user"
    INTERRUPTED_DURING_API_CALL = "interrupted_during_api_call"
    BUDGET_EXHAUSTED = "budget_exhausted"
    MAX_ITERATIONS_REACHED = "max_iterations_reached"
    GUARDRAIL_HALT = "guardrail_halt"
    EMPTY_RESPONSE_EXHAUSTED = "empty_response_exhausted"
    ALL_RETRIES_EXHAUSTED = "all_retries_exhausted"
    CONTEXT_OVERFLOW_UNRECOVERABLE = "context_overflow_unrecoverable"
    PERSISTENCE_FAILED = "persistence_failed"
    ERROR_NEAR_MAX_ITERATIONS = "error_near_max_iterations"
    CONTENT_POLICY_BLOCKED = "content_policy_blocked"
    # The answer stopped at the output limit (finish_reason length / max_tokens).
    OUTPUT_TRUNCATED = "output_truncated"
    # Model-call failures nothing can recover from (never retried), by classified reason.
    AUTH_FAILED = "auth_failed"
    OUT_OF_CREDIT = "out_of_credit"
    MODEL_NOT_FOUND = "model_not_found"
    INVALID_REQUEST = "invalid_request"
    MISSING_EXTRA = "missing_extra"  # an optional package Herald needs is not installed
    TLS_FAILED = "tls_failed"
    MODEL_CALL_FAILED = "model_call_failed"  # an error the classifier could not place
    SPEND_LIMIT_REACHED = "spend_limit_reached"  # a budget cap: the call was never made
    # Never returned: a turn that would end with it is a bug (tests assert this).
    UNKNOWN = "unknown"


# Exits after which the user got a real answer to their message.
COMPLETED_REASONS = frozenset({ExitReason.TEXT_RESPONSE})
# Exits whose final_text is the beginning of an answer the model did not finish.
PARTIAL_REASONS = frozenset({ExitReason.OUTPUT_TRUNCATED, ExitReason.CONTENT_POLICY_BLOCKED})


@dataclass
class TurnResult:
    final_text: str
    exit_reason: ExitReason
    session_id: str
    messages_added: list[dict[str, Any]] = field(default_factory=list)
    api_calls: int = 0
    usage: Usage = field(default_factory=Usage)
    estimated_cost_usd: float | None = None
    error: str | None = None  # a short human sentence when the turn failed
    spend_cap: str | None = None  # with spend_limit_reached: the cap's key ("budget.turn_usd")
    leftover_steer: str | None = None

    @property
    def completed(self) -> bool:
        return self.exit_reason in COMPLETED_REASONS

    @property
    def partial(self) -> bool:
        """final_text is an answer cut short (output limit, content filter)."""
        return bool(self.final_text) and self.exit_reason in PARTIAL_REASONS

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["exit_reason"] = self.exit_reason.value
        data["completed"] = self.completed
        data["partial"] = self.partial
        return data
