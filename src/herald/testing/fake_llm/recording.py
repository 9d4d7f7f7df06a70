"""The record of one HTTP request the fake server received."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

ApiName = Literal["openai", "anthropic", "models", "audio"]


def _flatten_text(content: Any) -> str:
    """Text of a message ``content``: a string, or the text parts of a block list."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            block.get("text", "")
            for block in content
            if isinstance(block, dict) and isinstance(block.get("text"), str)
        ]
        return "\n".join(parts)
    return str(content)


@dataclass(frozen=True)
class RecordedRequest:
    """One request as it arrived: raw bytes plus the parsed JSON body.

    ``headers`` has lower-case keys. ``body`` is None when the body was empty or
    not a JSON object. ``connection_id`` numbers the TCP connections the server
    accepted, so requests sharing one were sent over a kept-alive connection.
    """

    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any] | None
    raw: bytes
    api: ApiName
    stream: bool
    timestamp: float
    query: str = ""
    connection_id: int = 0

    @classmethod
    def parse_body(cls, raw: bytes) -> dict[str, Any] | None:
        if not raw:
            return None
        try:
            parsed = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            return None
        return parsed if isinstance(parsed, dict) else None

    @property
    def model(self) -> str | None:
        value = (self.body or {}).get("model")
        return value if isinstance(value, str) else None

    @property
    def messages(self) -> list[dict[str, Any]]:
        value = (self.body or {}).get("messages")
        return value if isinstance(value, list) else []

    @property
    def system(self) -> str | None:
        """The system prompt as text.

        OpenAI: the content of the first ``system`` (or ``developer``) message.
        Anthropic: the ``system`` field, its text blocks joined with newlines.
        """
        if self.api == "anthropic":
            value = (self.body or {}).get("system")
            return None if value is None else _flatten_text(value)
        for message in self.messages:
            if isinstance(message, dict) and message.get("role") in ("system", "developer"):
                return _flatten_text(message.get("content"))
        return None

    @property
    def tools(self) -> list[dict[str, Any]] | None:
        value = (self.body or {}).get("tools")
        return value if isinstance(value, list) else None

    @property
    def last_user_text(self) -> str | None:
        """Text of the newest user message, handy in handler functions."""
        for message in reversed(self.messages):
            if isinstance(message, dict) and message.get("role") == "user":
                return _flatten_text(message.get("content"))
        return None
