"""What a chat is told when a turn ends: the reply, or a short human sentence.

Provider failures arrive as the engine's classified sentence ("the model provider is
overloaded") or as an exception; both become one line a person understands and can
act on. Everything here is redacted before it is shown.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from herald.gateway.contracts import DispatchResult
from herald.safety import redact

if TYPE_CHECKING:
    from herald.engine import TurnResult

log = logging.getLogger(__name__)

INTERRUPTED = frozenset({"interrupted_by_user", "interrupted_during_api_call"})

_ADVICE = {
    "the model provider is overloaded": "try again in a minute",
    "the provider is rate-limiting us": "try again in a minute",
    "the model provider had a server error": "try again in a minute",
    "the model call timed out": "try again in a minute",
    "the connection to the model provider failed": "check the network, then try again",
    "the API key was rejected": "the owner needs to check the API key",
    "the API key is invalid or revoked": "the owner needs to check the API key",
    "the provider account is out of credit or quota": "the owner needs to top up the account",
    "the conversation is too long for the model's context window": "send /compress or /new",
    "the provider's content policy blocked the request": "rephrase the request",
}

_EXIT_SENTENCES = {
    "max_iterations_reached": "I ran out of steps for this turn",
    "budget_exhausted": "I ran out of budget for this turn",
    "guardrail_halt": "I stopped because the same tool calls kept failing",
    "empty_response_exhausted": "the model kept returning empty answers",
    "persistence_failed": "I could not save the conversation",
    "context_overflow_unrecoverable": "the conversation is too long for the model",
    "content_policy_blocked": "the provider's content policy blocked the request",
}


def failure_sentence(error: str | None, exit_reason: str) -> str:
    """One short line: what went wrong and what to do."""
    base = (error or _EXIT_SENTENCES.get(exit_reason) or exit_reason.replace("_", " ")).strip()
    base = base.rstrip(".")
    advice = next((tip for prefix, tip in _ADVICE.items() if base.startswith(prefix)), None)
    sentence = base[:1].upper() + base[1:]
    return redact(f"⚠️ {sentence}" + (f"; {advice}." if advice else "."))


def exception_sentence(exc: BaseException) -> str:
    """For an exception that escaped a turn: a provider error gets its classified
    sentence, anything else a generic one (the details go to the log)."""
    from herald.config import ConfigError, MissingSecretError
    from herald.context import UnknownContextEngineError
    from herald.providers import ProviderConfigError, ProviderError, classify_error
    from herald.tools import ToolsetError

    if isinstance(exc, ProviderError | TimeoutError | ConnectionError):
        return failure_sentence(classify_error(exc).user_message, "error")
    if isinstance(
        exc,
        ConfigError
        | MissingSecretError
        | ProviderConfigError
        | ToolsetError
        | UnknownContextEngineError,
    ):  # the owner must fix the setup: say what
        return redact(f"⚠️ Herald cannot answer here: {exc}")
    return "⚠️ Something went wrong inside Herald while answering; the details are in the log."


def usage_dict(result: TurnResult) -> dict[str, int]:
    usage = result.usage
    return {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "total_tokens": usage.total_tokens,
        "cache_read_tokens": usage.cache_read_tokens,
    }


def turn_to_dispatch(result: TurnResult, *, interrupted_note: str | None = None) -> DispatchResult:
    """The reply to show for a finished turn."""
    reason = result.exit_reason.value
    text = redact((result.final_text or "").strip())
    common = {"session_id": result.session_id, "exit_reason": reason, "usage": usage_dict(result)}
    if result.completed:
        return DispatchResult("replied", text or "(no answer)", **common)
    if reason in INTERRUPTED:
        note = interrupted_note or ""
        return DispatchResult("replied", "\n\n".join(p for p in (text, note) if p), **common)
    sentence = failure_sentence(result.error, reason)
    if text:
        return DispatchResult("replied", f"{text}\n\n{sentence}", **common)
    return DispatchResult("error", sentence, **common)


__all__ = ["exception_sentence", "failure_sentence", "turn_to_dispatch", "usage_dict"]
