"""The wire half of the lean transports: JSON bodies, server-sent events, errors.

A response here is either the stdlib client's (`herald.providers.lean.http`) or
an httpx2 one: both have ``status_code``, ``headers``, ``read()``, ``text``,
``iter_lines()`` and ``close()``.

Responses are handed to the SDK transports' parsers as `JsonView`s: decoded JSON
whose keys read as attributes (a missing key reads as None), which is all those
parsers ask of the SDKs' typed models. Failures become the same `ProviderError`s
the SDK transports produce, through `to_provider_error`, by giving it an
exception shaped like an SDK status error.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

from herald.providers.base import ProviderError
from herald.providers.error_mapping import to_provider_error

log = logging.getLogger(__name__)


class JsonView(dict):  # type: ignore[type-arg]
    """A decoded JSON object whose keys are also attributes; absent keys are None.

    It stays a dict, so `json.dumps` of a view (a tool call's ``input``) is the
    original JSON."""

    __slots__ = ()
    model_extra = None  # the SDK models' bag of unknown fields: here every key is known

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return view(self.get(name))


def view(value: Any) -> Any:
    if isinstance(value, dict) and not isinstance(value, JsonView):
        return JsonView(value)
    if isinstance(value, list):
        return [view(item) for item in value]
    return value


class StatusError(Exception):
    """An error answer, shaped like the SDKs' status errors (``status_code``,
    ``body``, ``response``) so `to_provider_error` reads it the same way."""

    def __init__(self, message: str, *, status_code: int, body: Any, response: Any) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.body = body
        self.response = response


def encode(body: dict[str, Any]) -> bytes:
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def decode_json(text: str) -> Any:
    return json.loads(text)


def status_error(response: Any, provider: str) -> ProviderError:
    """The `ProviderError` for an answer with status >= 400 (its body is read)."""
    try:
        response.read()
        text = response.text
    except Exception:  # the connection died while reading the error body
        log.debug("reading the error body failed", exc_info=True)
        text = ""
    try:
        body: Any = json.loads(text) if text else None
    except ValueError:
        body = text
    exc = StatusError(
        f"Error code: {response.status_code} - {text[:500]}",
        status_code=response.status_code,
        body=body,
        response=response,
    )
    return to_provider_error(exc, provider)


def redirect_error(response: Any, url: str, provider: str) -> ProviderError:
    """A 3xx: API calls are not followed to another address, the user fixes the URL."""
    location = response.headers.get("location") or "(no location given)"
    return ProviderError(
        f"HTTP {response.status_code}: {url} redirects to {location}; set model.base_url "
        "to the address the server names",
        provider=provider,
        status=response.status_code,
    )


def stream_error(data: Any, provider: str, status: int) -> ProviderError:
    """An error event inside a 200 stream (``{"error": {...}}`` or ``event: error``)."""
    error = data.get("error") if isinstance(data, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    exc = StatusError(
        message if isinstance(message, str) and message else "An error occurred during streaming",
        status_code=status,
        body=data,
        response=None,
    )
    return to_provider_error(exc, provider)


class ServerSentEvent:
    __slots__ = ("data", "event")

    def __init__(self, event: str | None, data: str) -> None:
        self.event = event
        self.data = data


def iter_events(lines: Iterator[str]) -> Iterator[ServerSentEvent]:
    """Server-sent events from the lines of a body (comments and ids skipped)."""
    event: str | None = None
    data: list[str] = []
    for line in lines:
        if not line:
            if data or event is not None:
                yield ServerSentEvent(event, "\n".join(data))
            event, data = None, []
            continue
        if line.startswith(":"):
            continue  # a comment, e.g. a keep-alive
        field, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if field == "data":
            data.append(value)
        elif field == "event":
            event = value
    if data or event is not None:
        yield ServerSentEvent(event, "\n".join(data))


class EventStream:
    """The decoded items of one streamed answer; `close()` releases the response
    (the call scope calls it to abort a stream that is being read)."""

    def __init__(self, response: Any, items: Iterator[Any]) -> None:
        self.response = response
        self._items = items

    def __iter__(self) -> Iterator[Any]:
        try:
            yield from self._items
        finally:
            self.close()

    def close(self) -> None:
        self.response.close()


def openai_chunks(response: Any, provider: str) -> Iterator[Any]:
    """Chat-completion chunks until ``[DONE]``; an ``error`` payload raises."""
    for sse in iter_events(response.iter_lines()):
        if sse.data.startswith("[DONE]"):
            drain = getattr(response, "drain", None)  # the stdlib client's, for keep-alive
            if drain is not None:
                drain()
            return
        if not sse.data:
            continue
        data = decode_json(sse.data)
        if isinstance(data, dict) and data.get("error"):
            raise stream_error(data, provider, response.status_code)
        yield view(data)


def anthropic_events(response: Any, provider: str) -> Iterator[Any]:
    """Messages-API events; ``ping`` skipped, an ``error`` event raises."""
    for sse in iter_events(response.iter_lines()):
        if sse.event in (None, "ping"):
            continue
        if sse.event == "error":
            try:
                body: Any = decode_json(sse.data)
            except ValueError:
                body = sse.data
            raise stream_error(body, provider, response.status_code)
        if not sse.data:
            continue
        yield view(decode_json(sse.data))
