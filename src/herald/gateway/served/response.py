"""What the request/response entrances (the HTTP API, webhooks) have in common: they
answer in the HTTP response, so they never push, never split and serve from an
embedded server on their own port."""

from __future__ import annotations

from typing import Any

from herald.gateway.contracts import Button, PlatformAdapter, SendResult
from herald.safety import redact

NO_SPLIT_LIMIT = 1_000_000  # an HTTP body: the runner has no reason to split


class HttpResponseAdapter(PlatformAdapter):
    push_replies = False
    push_refusal = "this entrance answers in the HTTP response and cannot push messages"

    _server: Any = None
    _extra: tuple[str, ...] = ()

    def max_message_length(self, chat_id: str) -> int:
        return NO_SPLIT_LIMIT

    async def send(
        self,
        chat_id: str,
        text: str,
        *,
        reply_to: str | None = None,
        thread_id: str | None = None,
        buttons: list[list[Button]] | None = None,
    ) -> SendResult:
        return SendResult(ok=False, permanent_failure=True, error=self.push_refusal)

    def redact(self, text: str) -> str:
        return redact(text, extra_secrets=self._extra)

    @property
    def port(self) -> int:
        if self._server is None or self._server.port is None:
            raise RuntimeError(f"the {self.name} adapter is not serving; call connect() first")
        return self._server.port
