"""Error classification: what a failed model call means and what to do next.

`classify_error` is a pure table lookup. `RULES` maps the observable facts of a
failure (non-HTTP kind, HTTP status, provider code/type, message wording) to a
`FailoverReason`; `POLICY` maps each reason to the engine's options (retry,
compress the context, rotate the API key, fall back to another endpoint).
The first matching rule wins, so specific wordings come before bare statuses.

Each reason also has one `Recovery`, the engine's plan in a single value
(`herald.engine.model_call` matches on it): ask again, compress, wait and retry,
rotate the key, fall back, or stop.

`should_fallback` means "this endpoint cannot serve us; switch now" (bad key
with no other key, no credit, unknown model). Transient reasons (rate limit,
overload, 5xx, timeouts, cut streams) are `retryable` instead, with
`should_fallback` False: the engine retries them and falls back only once its
retries are spent, so one hiccup does not move a session to another model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from herald.providers.base import ProviderError
from herald.providers.error_mapping import to_provider_error


class FailoverReason(StrEnum):
    AUTH = "auth"
    AUTH_PERMANENT = "auth_permanent"
    BILLING = "billing"
    RATE_LIMIT = "rate_limit"
    OVERLOADED = "overloaded"
    SERVER_ERROR = "server_error"
    TIMEOUT = "timeout"
    CONNECTION = "connection"
    CONTEXT_OVERFLOW = "context_overflow"
    PAYLOAD_TOO_LARGE = "payload_too_large"
    CONTENT_POLICY = "content_policy"
    MODEL_NOT_FOUND = "model_not_found"
    INVALID_REQUEST = "invalid_request"
    MALFORMED_RESPONSE = "malformed_response"
    EMPTY_RESPONSE = "empty_response"
    TLS_CERTIFICATE = "tls_certificate"
    MISSING_DEPENDENCY = "missing_dependency"
    UNKNOWN = "unknown"


class Recovery(StrEnum):
    """What the engine does about a failed call (one value per reason)."""

    ASK_AGAIN = "ask_again"  # an empty answer: the same request once more
    COMPRESS = "compress"  # the request is too big: compress the context, then retry
    RETRY = "retry"  # transient: back off and retry (another key first if it may help)
    ROTATE = "rotate"  # this key cannot serve us: another key, else another endpoint
    FALL_BACK = "fall_back"  # this endpoint cannot serve us: the next one in the chain
    STOP = "stop"  # nothing helps: end the turn with the reason


@dataclass(frozen=True)
class ClassifiedError:
    reason: FailoverReason
    retryable: bool
    should_compress: bool
    should_rotate_credential: bool
    should_fallback: bool
    retry_after: float | None
    user_message: str
    recovery: Recovery = Recovery.STOP
    detail: str = ""  # the provider's own words (status, message), not yet redacted


@dataclass(frozen=True)
class Rule:
    """One row of the classification table; every given condition must hold."""

    reason: FailoverReason
    kinds: frozenset[str] | None = None
    statuses: frozenset[int] | None = None
    status_range: tuple[int, int] | None = None
    not_statuses: frozenset[int] = frozenset()
    code: LazyPattern | None = None
    error_type: LazyPattern | None = None
    message: LazyPattern | None = None
    # code, type and message conditions: any one suffices (they are alternatives)

    def matches(self, err: ProviderError) -> bool:
        if self.kinds is not None and err.kind not in self.kinds:
            return False
        if self.statuses is not None and err.status not in self.statuses:
            return False
        if self.status_range is not None and not (
            err.status is not None and self.status_range[0] <= err.status <= self.status_range[1]
        ):
            return False
        if err.status in self.not_statuses:
            return False
        text_conditions = [c for c in (self.code, self.error_type, self.message) if c is not None]
        if not text_conditions:
            return True
        if self.code is not None and err.code and self.code.search(err.code):
            return True
        if (
            self.error_type is not None
            and err.error_type
            and self.error_type.search(err.error_type)
        ):
            return True
        if self.message is not None:
            haystack = f"{err.message}\n{err.body or ''}"
            if self.message.search(haystack):
                return True
        return False


class LazyPattern:
    """A case-insensitive regular expression compiled on its first search: the table
    below holds some thirty, and a process that meets no provider error needs none."""

    __slots__ = ("_compiled", "pattern")

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self._compiled: re.Pattern[str] | None = None

    def search(self, text: str) -> re.Match[str] | None:
        compiled = self._compiled
        if compiled is None:
            compiled = self._compiled = re.compile(self.pattern, re.IGNORECASE)
        return compiled.search(text)


def _re(pattern: str) -> LazyPattern:
    return LazyPattern(pattern)


# Statuses servers deliver a context overflow on (proxies turn it into 502/503/529).
_HTTP_AND_STREAM_ERRORS = frozenset({400, 404, 413, 422, 500, 502, 503, 529, None})

CONTEXT_OVERFLOW_WORDING = _re(
    r"context[_ ]length[_ ]exceeded|maximum context length|context length|"
    r"context[_ ]window|exceeds? the (?:model'?s? )?(?:maximum )?context|"
    r"prompt is too long|input is too long|too many (?:input )?tokens|"
    r"reduce the length of the (?:messages|prompt|input)|"
    r"exceeds? the available context|exceed_context_size|context size|"
    r"requested \d+ tokens|tokens? (?:limit|count) exceed|"
    r"prompt \(?\d+ tokens\)? .*(?:exceeds|too long)|input length .* exceeds|"
    # vLLM
    r"exceeds? (?:the )?max_model_len|exceeds? (?:the )?maximum model length|"
    r"longer than the maximum model length|"
    # llama.cpp server (slots, context size, context shift)
    r"larger than the max context size|context shift is disabled|n_ctx_slot|"
    r"exceeds? the (?:slot'?s? )?context size|context size (?:has been )?exceeded|"
    # Ollama
    r"exceeded max context length|exceeds? the context length|prompt too long|"
    # llama.cpp KV cache, Gemini, Moonshot, DashScope (Qwen)
    r"not enough space in the context|input token count .{0,40}exceeds|"
    r"exceeded model token limit|range of input length should be|"
    # Chinese-language servers (Zhipu, Qwen, Moonshot, Baichuan, DeepSeek mirrors)
    r"上下文(?:长度|窗口)?.{0,12}(?:超|过长|已满|限制)|"
    r"(?:超过|超出)了?.{0,12}(?:上下文|最大长度|最大输入|token|令牌)|"
    r"(?:输入|提示词?|prompt|请求).{0,10}(?:超长|过长)|token\s*数.{0,6}(?:超过|超出)"
)
# A wait the server names in words: "try again in 20 minutes", "retry in 45s".
WAIT_WORDING = _re(
    r"(?:try|retry)(?: again)? in (?:about |approximately )?(\d+(?:\.\d+)?)\s*"
    r"(ms|milliseconds?|s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?)\b"
)

RULES: list[Rule] = [
    Rule(FailoverReason.TLS_CERTIFICATE, kinds=frozenset({"tls"})),
    Rule(FailoverReason.MISSING_DEPENDENCY, kinds=frozenset({"missing_dependency"})),
    Rule(FailoverReason.TIMEOUT, kinds=frozenset({"timeout"})),
    Rule(FailoverReason.CONNECTION, kinds=frozenset({"connection"})),
    Rule(FailoverReason.MALFORMED_RESPONSE, kinds=frozenset({"malformed_response"})),
    Rule(FailoverReason.EMPTY_RESPONSE, kinds=frozenset({"empty_response"})),
    # Context overflow is worded, not coded, by most servers; never on 429 where
    # "too many tokens" means a per-minute limit.
    Rule(
        FailoverReason.CONTEXT_OVERFLOW,
        statuses=_HTTP_AND_STREAM_ERRORS,
        # Zhipu (GLM) numbers its errors: 1261 is "prompt too long"
        code=_re(r"context_length_exceeded|exceed_context_size|context_window|^1261$"),
        error_type=_re(r"exceed_context_size"),
        message=CONTEXT_OVERFLOW_WORDING,
    ),
    Rule(
        FailoverReason.PAYLOAD_TOO_LARGE,
        statuses=frozenset({413}),
    ),
    Rule(
        FailoverReason.PAYLOAD_TOO_LARGE,
        code=_re(r"request_too_large|payload_too_large"),
        error_type=_re(r"request_too_large"),
        message=_re(r"request entity too large|payload too large|request too large"),
        not_statuses=frozenset({429}),
    ),
    Rule(
        FailoverReason.CONTENT_POLICY,
        not_statuses=frozenset({401, 402, 429}),
        code=_re(
            r"content_filter|content_policy|content_policy_violation|moderation|safety|"
            r"responsibleaipolicyviolation"
        ),
        error_type=_re(r"content_filter|content_policy"),
        message=_re(
            r"content (?:management )?polic|content filter|safety (?:system|filter)|"
            r"flagged (?:as|by|for)|responsible ?ai|violates? (?:our|the) (?:usage )?polic"
        ),
    ),
    # Throttling is a wait, whatever the status (Alibaba sends it as 400 or 503).
    Rule(
        FailoverReason.RATE_LIMIT,
        not_statuses=frozenset({401, 402}),
        code=_re(r"^throttl"),
        message=_re(r"rate increased too quickly|\bthrottl(?:ed|ing)\b"),
    ),
    # A 402 that names a wait is a usage window, not an empty account: retry
    # after it instead of benching the key as if it had no credit.
    Rule(FailoverReason.RATE_LIMIT, statuses=frozenset({402}), message=WAIT_WORDING),
    Rule(FailoverReason.BILLING, statuses=frozenset({402})),
    Rule(
        FailoverReason.BILLING,
        code=_re(r"insufficient_quota|billing|payment|credit"),
        error_type=_re(r"insufficient_quota|billing"),
        message=_re(
            r"insufficient[_ ]quota|exceeded your current quota|\bcredit(?:s| balance)\b|"
            r"billing|payment required|insufficient (?:funds|balance)|"
            r"out of extra usage|extra usage (?:limit|exhausted)"
        ),
    ),
    Rule(
        FailoverReason.AUTH_PERMANENT,
        statuses=frozenset({400, 401, 403, None}),
        code=_re(r"invalid_api_key|api_key_revoked|account_deactivated"),
        message=_re(
            r"invalid (?:x-)?api[ _-]?key|incorrect api key|api key (?:is )?(?:not valid|invalid)|"
            r"revoked|deactivated|key (?:has been )?disabled|account (?:is )?(?:disabled|suspended)"
        ),
    ),
    Rule(FailoverReason.AUTH, statuses=frozenset({401, 403})),
    Rule(FailoverReason.AUTH, error_type=_re(r"authentication_error|permission_error")),
    Rule(FailoverReason.RATE_LIMIT, statuses=frozenset({429})),
    # Some gateways put a rate limit in a 400 (or a stream error) body.
    Rule(
        FailoverReason.RATE_LIMIT,
        statuses=frozenset({400, None}),
        message=_re(r"rate[ _-]?limit|too many requests"),
    ),
    Rule(
        FailoverReason.RATE_LIMIT,
        code=_re(r"rate_limit"),
        error_type=_re(r"rate_limit"),
    ),
    # A 5xx whose body calls the request invalid will fail the same way again.
    Rule(
        FailoverReason.INVALID_REQUEST,
        status_range=(500, 599),
        code=_re(r"invalid_request"),
        error_type=_re(r"invalid_request"),
        message=_re(r"\"type\"\s*:\s*\"invalid_request_error\""),
    ),
    Rule(FailoverReason.OVERLOADED, statuses=frozenset({529})),
    Rule(
        FailoverReason.OVERLOADED,
        error_type=_re(r"overloaded"),
        code=_re(r"overloaded"),
        message=_re(r"\boverloaded\b|at capacity"),
        not_statuses=frozenset({400, 404}),
    ),
    Rule(
        FailoverReason.MODEL_NOT_FOUND,
        statuses=frozenset({404}),
    ),
    Rule(
        FailoverReason.MODEL_NOT_FOUND,
        statuses=frozenset({400, None}),
        code=_re(r"model_not_found|local_model_unavailable"),
        error_type=_re(r"not_found"),
        message=_re(
            r"model .*(?:not found|does not exist|not available)|unknown model|no such model|"
            r"invalid model"
        ),
    ),
    Rule(FailoverReason.TIMEOUT, statuses=frozenset({408})),
    Rule(FailoverReason.SERVER_ERROR, status_range=(500, 599)),
    Rule(FailoverReason.SERVER_ERROR, error_type=_re(r"^api_error$|server_error")),
    Rule(FailoverReason.INVALID_REQUEST, status_range=(400, 499)),
    Rule(FailoverReason.INVALID_REQUEST, error_type=_re(r"invalid_request")),
]


@dataclass(frozen=True)
class Policy:
    retryable: bool
    compress: bool
    rotate: bool
    fallback: bool
    user_message: str


POLICY: dict[FailoverReason, Policy] = {
    FailoverReason.AUTH: Policy(False, False, True, True, "the API key was rejected"),
    FailoverReason.AUTH_PERMANENT: Policy(
        False, False, True, True, "the API key is invalid or revoked"
    ),
    FailoverReason.BILLING: Policy(
        False, False, True, True, "the provider account is out of credit or quota"
    ),
    FailoverReason.RATE_LIMIT: Policy(True, False, True, False, "the provider is rate-limiting us"),
    FailoverReason.OVERLOADED: Policy(
        True, False, False, False, "the model provider is overloaded"
    ),
    FailoverReason.SERVER_ERROR: Policy(
        True, False, False, False, "the model provider had a server error"
    ),
    FailoverReason.TIMEOUT: Policy(True, False, False, False, "the model call timed out"),
    FailoverReason.CONNECTION: Policy(
        True, False, False, False, "the connection to the model provider failed"
    ),
    FailoverReason.CONTEXT_OVERFLOW: Policy(
        False, True, False, False, "the conversation is too long for the model's context window"
    ),
    FailoverReason.PAYLOAD_TOO_LARGE: Policy(
        False, True, False, False, "the request is too large for the provider"
    ),
    FailoverReason.CONTENT_POLICY: Policy(
        False, False, False, False, "the provider's content policy blocked the request"
    ),
    FailoverReason.MODEL_NOT_FOUND: Policy(
        False, False, False, True, "the model was not found at the provider"
    ),
    FailoverReason.INVALID_REQUEST: Policy(
        False, False, False, False, "the provider rejected the request as invalid"
    ),
    FailoverReason.MALFORMED_RESPONSE: Policy(
        True, False, False, False, "the model provider sent a malformed response"
    ),
    FailoverReason.EMPTY_RESPONSE: Policy(
        True, False, False, False, "the model returned an empty response"
    ),
    FailoverReason.TLS_CERTIFICATE: Policy(
        False,
        False,
        False,
        True,
        "the provider's TLS certificate could not be verified (a self-signed or private "
        "CA certificate?): point SSL_CERT_FILE at the CA bundle, or use http:// for a "
        "server on this machine",
    ),
    FailoverReason.MISSING_DEPENDENCY: Policy(
        False, False, False, True, "an optional package this provider needs is not installed"
    ),
    FailoverReason.UNKNOWN: Policy(False, False, False, False, "the model call failed"),
}

RECOVERY: dict[FailoverReason, Recovery] = {
    FailoverReason.AUTH: Recovery.ROTATE,
    FailoverReason.AUTH_PERMANENT: Recovery.ROTATE,
    FailoverReason.BILLING: Recovery.ROTATE,
    FailoverReason.RATE_LIMIT: Recovery.RETRY,
    FailoverReason.OVERLOADED: Recovery.RETRY,
    FailoverReason.SERVER_ERROR: Recovery.RETRY,
    FailoverReason.TIMEOUT: Recovery.RETRY,
    FailoverReason.CONNECTION: Recovery.RETRY,
    FailoverReason.MALFORMED_RESPONSE: Recovery.RETRY,
    FailoverReason.EMPTY_RESPONSE: Recovery.ASK_AGAIN,
    FailoverReason.CONTEXT_OVERFLOW: Recovery.COMPRESS,
    FailoverReason.PAYLOAD_TOO_LARGE: Recovery.COMPRESS,
    FailoverReason.MODEL_NOT_FOUND: Recovery.FALL_BACK,
    FailoverReason.TLS_CERTIFICATE: Recovery.FALL_BACK,
    FailoverReason.MISSING_DEPENDENCY: Recovery.FALL_BACK,
    FailoverReason.CONTENT_POLICY: Recovery.STOP,
    FailoverReason.INVALID_REQUEST: Recovery.STOP,
    FailoverReason.UNKNOWN: Recovery.STOP,
}


def reason_for(err: ProviderError) -> FailoverReason:
    for rule in RULES:
        if rule.matches(err):
            return rule.reason
    return FailoverReason.UNKNOWN


def wait_in_words(text: str) -> float | None:
    """Seconds from "try again in 20 minutes" in an error message, or None."""
    match = WAIT_WORDING.search(text)
    if match is None:
        return None
    unit = match.group(2).lower()
    if unit == "ms" or unit.startswith("milli"):
        factor = 0.001
    elif unit.startswith("h"):
        factor = 3600.0
    elif unit.startswith("m"):
        factor = 60.0
    else:
        factor = 1.0
    return float(match.group(1)) * factor


def classify_error(exc: BaseException) -> ClassifiedError:
    """Classify any exception from a model call (a `ProviderError`, an SDK error, or a
    raw TimeoutError/ConnectionError/OSError)."""
    err = exc if isinstance(exc, ProviderError) else to_provider_error(exc)
    reason = reason_for(err)
    policy = POLICY[reason]
    return ClassifiedError(
        reason=reason,
        retryable=policy.retryable,
        should_compress=policy.compress,
        should_rotate_credential=policy.rotate,
        should_fallback=policy.fallback,
        retry_after=err.retry_after
        if err.retry_after is not None or reason is not FailoverReason.RATE_LIMIT
        else wait_in_words(f"{err.message}\n{err.body or ''}"),
        user_message=policy.user_message,
        recovery=RECOVERY[reason],
        detail=err.message,
    )
