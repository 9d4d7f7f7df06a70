"""The two lean transports: the SDK transports' request building, parsing and call
skeleton (cancel scope, stream-refusal fallback, error translation), with the
request itself made by one POST on `herald.providers.lean.http` (or on an
httpx2 client when the environment names a proxy) instead of through an SDK.

Only `_new_client` and `_create` differ from the SDK transports, so everything
else (canonical request bytes, stream assembly, usage, finish reasons, the
empty-answer and content-filter errors) is the same code on both paths.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from herald import __version__
from herald.providers._http import build_http_client
from herald.providers.anthropic_messages import AnthropicMessagesTransport
from herald.providers.lean.http import Client, proxy_configured
from herald.providers.lean.wire import (
    EventStream,
    anthropic_events,
    decode_json,
    encode,
    openai_chunks,
    redirect_error,
    status_error,
    view,
)
from herald.providers.openai_chat import PLACEHOLDER_KEY, OpenAIChatTransport

ANTHROPIC_VERSION = "2023-06-01"
USER_AGENT = f"herald/{__version__}"


class _LeanHttp:
    """The POST both lean transports make. Mixed in ahead of an SDK transport."""

    provider: str
    timeout: float
    # None: httpx2 only when a proxy is configured; tests force either client.
    use_httpx: bool | None = None

    def _new_client(self) -> Any:
        use_httpx = proxy_configured() if self.use_httpx is None else self.use_httpx
        if use_httpx:
            return build_http_client(self.timeout)
        parts = urlsplit(self._url())
        return Client(f"{parts.scheme}://{parts.netloc}", self.timeout)

    def _url(self) -> str:
        raise NotImplementedError

    def _headers(self) -> dict[str, str]:
        raise NotImplementedError

    def _chunks(self, response: Any) -> Any:
        raise NotImplementedError

    def _post(self, request: dict[str, Any]) -> Any:
        client = self._sdk()  # type: ignore[attr-defined]
        headers = {
            "content-type": "application/json",
            "accept": "text/event-stream" if request.get("stream") else "application/json",
            "user-agent": USER_AGENT,
            **self._headers(),
        }
        url = self._url()
        if isinstance(client, Client):
            parts = urlsplit(url)
            path = parts.path + (f"?{parts.query}" if parts.query else "")
            response = client.post(path, encode(request), headers)
        else:
            built = client.build_request("POST", url, content=encode(request), headers=headers)
            response = client.send(built, stream=True)
        try:
            if response.status_code >= 400:
                raise status_error(response, self.provider)
            if response.status_code >= 300:
                raise redirect_error(response, url, self.provider)
            if request.get("stream"):
                return EventStream(response, self._chunks(response))
            response.read()
            data = decode_json(response.text)
        except BaseException:
            response.close()
            raise
        response.close()
        return view(data)

    def _create(self, request: dict[str, Any]) -> Any:
        return self._sdk_call(self._post, request)  # type: ignore[attr-defined]


class LeanOpenAIChatTransport(_LeanHttp, OpenAIChatTransport):
    """OpenAI chat completions (and compatible servers) without the `openai` SDK."""

    def _url(self) -> str:
        return f"{(self.base_url or 'https://api.openai.com/v1').rstrip('/')}/chat/completions"

    def _headers(self) -> dict[str, str]:
        headers = {"authorization": f"Bearer {self.api_key or PLACEHOLDER_KEY}"}
        if self.provider == "openrouter":
            headers["x-title"] = "Herald"
        return headers

    def _chunks(self, response: Any) -> Any:
        return openai_chunks(response, self.provider)


class LeanAnthropicMessagesTransport(_LeanHttp, AnthropicMessagesTransport):
    """Anthropic messages without the `anthropic` SDK."""

    def _url(self) -> str:
        return f"{(self.base_url or 'https://api.anthropic.com').rstrip('/')}/v1/messages"

    def _headers(self) -> dict[str, str]:
        return {"x-api-key": self.api_key or "", "anthropic-version": ANTHROPIC_VERSION}

    def _chunks(self, response: Any) -> Any:
        return anthropic_events(response, self.provider)
