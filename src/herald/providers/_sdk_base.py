"""What the two SDK transports share: the call skeleton (cancellation scope,
stream-refusal fallback, error translation) around their specific halves."""

from __future__ import annotations

import logging
import re
import threading
from abc import abstractmethod
from collections.abc import Callable, Iterable
from typing import Any

from herald.providers._http import CallScope, call_scope
from herald.providers.base import (
    CallCancelled,
    DeltaCallback,
    NormalizedResponse,
    ProviderError,
    ProviderTransport,
    ToolCall,
    Usage,
)
from herald.providers.error_mapping import is_transport_exception, to_provider_error

log = logging.getLogger(__name__)

STREAM_REFUSAL = re.compile(
    r"stream(?:ing|_options)?\b[^.\n]{0,60}?\b(?:not supported|unsupported|not available|"
    r"not allowed|disabled)|(?:does not|doesn't|cannot|can't) support stream|"
    r"(?:unsupported|not supported)[^.\n]{0,40}?\bstream",
    re.IGNORECASE,
)


def build_response(
    *,
    text: str,
    reasoning: str,
    tool_calls: list[ToolCall],
    finish_reason: str,
    usage: Usage | None,
    model: str | None,
    response_id: str | None,
) -> NormalizedResponse:
    """The normalized response both SDK transports return; an answer with neither
    text nor tool calls is an error (content filter, or plain empty)."""
    if tool_calls and finish_reason == "stop":
        finish_reason = "tool_calls"
    response = NormalizedResponse(
        text=text or None,
        tool_calls=tool_calls,
        reasoning=reasoning or None,
        finish_reason=finish_reason,
        usage=usage,
        model=model,
        response_id=response_id,
    )
    if response.is_empty:
        if finish_reason == "content_filter":
            raise ProviderError(
                "the model's answer was stopped by a content filter", code="content_filter"
            )
        raise ProviderError("the model returned no text and no tool calls", kind="empty_response")
    return response


def is_stream_refusal(err: ProviderError) -> bool:
    """A 400 that says the server (or model) cannot stream."""
    return err.status == 400 and bool(STREAM_REFUSAL.search(f"{err.message}\n{err.body or ''}"))


class SdkTransport(ProviderTransport):
    """A transport over an official SDK. Subclasses build the request, the client,
    and turn one streamed or whole response into a `NormalizedResponse`."""

    def __init__(
        self, *, provider: str, base_url: str | None, api_key: str | None, timeout: float = 120.0
    ):
        super().__init__(provider=provider, base_url=base_url, api_key=api_key, timeout=timeout)
        self._client: Any = None
        self._client_lock = threading.Lock()
        # Set once the server refused a streaming request: later calls don't ask.
        self.stream_refused = False

    @abstractmethod
    def _new_client(self) -> Any: ...

    @abstractmethod
    def _call_streaming(
        self, request: dict[str, Any], on_delta: DeltaCallback | None, scope: CallScope
    ) -> NormalizedResponse: ...

    @abstractmethod
    def _call_plain(self, request: dict[str, Any], scope: CallScope) -> NormalizedResponse: ...

    def _sdk(self) -> Any:
        with self._client_lock:
            if self._client is None:
                self._client = self._new_client()
            return self._client

    def call(
        self,
        request: dict[str, Any],
        *,
        stream: bool = True,
        on_delta: DeltaCallback | None = None,
        cancel: threading.Event | None = None,
    ) -> NormalizedResponse:
        try:
            with call_scope(cancel, timeout=self.timeout) as scope:
                if stream and not self.stream_refused:
                    try:
                        return self._call_streaming(request, on_delta, scope)
                    except ProviderError as err:
                        if not is_stream_refusal(err) or scope.cancelled:
                            raise
                        log.info(
                            "%s refused to stream; using non-streaming requests", self.provider
                        )
                        self.stream_refused = True
                return self._call_plain(request, scope)
        except ProviderError as err:
            err.provider = err.provider or self.provider
            self._name_the_server(err)
            raise
        raise CallCancelled("the model call was cancelled")  # pragma: no cover

    def _name_the_server(self, err: ProviderError) -> None:
        """A server that cannot be reached is named, so the user knows which one."""
        if err.kind not in ("connection", "tls", "timeout"):
            return
        url = self.base_url or str(getattr(self._client, "base_url", "") or "")
        if url and url not in err.message:
            err.message = f"{err.message} (server: {url})"
            err.args = (err.message,)

    def _sdk_call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Call into the SDK, translating its failures into `ProviderError`."""
        try:
            return fn(*args, **kwargs)
        except Exception as exc:
            if not is_transport_exception(exc):
                raise
            raise to_provider_error(exc, self.provider) from exc

    def _consume(self, stream: Any, scope: CallScope, add: Callable[[Any], None]) -> None:
        """Feed every item of an SDK stream to `add`, stopping when cancelled."""
        scope.add_closer(stream.close)
        items: Iterable[Any] = stream
        try:
            for item in items:
                if scope.cancelled:
                    break
                add(item)
        except Exception as exc:
            if not is_transport_exception(exc):
                raise
            raise to_provider_error(exc, self.provider) from exc
        finally:
            try:
                stream.close()
            except Exception:  # the connection may already be torn down
                log.debug("closing the stream failed", exc_info=True)
        if scope.cancelled:
            raise CallCancelled("the model call was cancelled")

    def close(self) -> None:
        with self._client_lock:
            if self._client is not None:
                self._client.close()
                self._client = None
