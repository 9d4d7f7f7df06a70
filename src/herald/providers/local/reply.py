"""Reading the model's grammar-constrained JSON reply back into the normalized shape,
and streaming the ``answer`` string while it is still being generated.

What happens when the JSON is not what the grammar promised:

- cut off by ``max_tokens`` inside ``{"answer": "...`` → the part written so
  far is the answer text, with ``finish_reason="length"`` (like any truncated
  answer from an API);
- cut off inside a tool call, or not parseable at all, or naming a tool that
  was not offered → ``ProviderError(kind="malformed_response")``. A half tool
  call cannot be run safely and guessing a tool is worse than a retry, which is
  what the engine does for that kind.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass

from herald.providers.base import ProviderError, ToolCall

_ANSWER_OPENING = re.compile(r'\s*\{\s*"answer"\s*:\s*"')
_ANSWER_OPENING_COMPACT = '{"answer":"'
_HEX = frozenset("0123456789abcdefABCDEF")


@dataclass
class ParsedReply:
    text: str | None
    tool_call: ToolCall | None
    finish_reason: str


def new_call_id() -> str:
    return f"call_{uuid.uuid4().hex[:24]}"


def _malformed(message: str, raw: str) -> ProviderError:
    return ProviderError(message, provider="local", kind="malformed_response", body=raw[:4000])


def decode_partial_string(body: str) -> tuple[str, bool]:
    """Decode the inside of a JSON string that may still be growing.

    Returns the text decoded so far and whether the closing quote was reached.
    A trailing incomplete escape (``\\``, ``\\u00``, or a high surrogate waiting
    for its pair) is held back, so every result is a prefix of the final one.
    """
    i, n = 0, len(body)
    safe_end = 0
    complete = False
    while i < n:
        ch = body[i]
        if ch == '"':
            complete = True
            safe_end = i
            break
        if ch != "\\":
            i += 1
            safe_end = i
            continue
        if i + 1 >= n:
            break
        if body[i + 1] != "u":
            i += 2
            safe_end = i
            continue
        digits = body[i + 2 : i + 6]
        if len(digits) < 4 or not set(digits) <= _HEX:
            break
        if 0xD800 <= int(digits, 16) <= 0xDBFF:
            pair = body[i + 6 : i + 12]
            if len(pair) < 6:
                break  # wait for the low surrogate before emitting either half
        i += 6
        safe_end = i
    return json.loads(f'"{body[:safe_end]}"', strict=False), complete


class AnswerStream:
    """Fed the raw JSON as it streams; returns the new characters of the answer
    string, or "" while the reply is (or may turn out to be) a tool call."""

    def __init__(self) -> None:
        self._raw = ""
        self._body_start: int | None = None
        self._emitted = 0
        self._done = False

    def feed(self, chunk: str) -> str:
        self._raw += chunk
        if self._done:
            return ""
        if self._body_start is None:
            match = _ANSWER_OPENING.match(self._raw)
            if match is None:
                compact = "".join(self._raw.split())
                if not _ANSWER_OPENING_COMPACT.startswith(compact):
                    self._done = True  # a tool call: nothing to stream
                return ""
            self._body_start = match.end()
        try:
            decoded, complete = decode_partial_string(self._raw[self._body_start :])
        except json.JSONDecodeError:
            self._done = True
            return ""
        delta = decoded[self._emitted :]
        self._emitted = len(decoded)
        self._done = complete
        return delta


def parse_reply(raw: str, offered: list[str], finish_reason: str) -> ParsedReply:
    """The normalized reply for JSON produced under the reply grammar."""
    try:
        data = json.loads(raw, strict=False)
    except json.JSONDecodeError:
        match = _ANSWER_OPENING.match(raw)
        if finish_reason == "length" and match is not None:
            text, _ = decode_partial_string(raw[match.end() :])
            return ParsedReply(text, None, "length")
        if finish_reason == "length":
            raise _malformed(
                "the local model's tool call was cut off by max_tokens before its JSON "
                "was complete",
                raw,
            ) from None
        raise _malformed("the local model's reply is not valid JSON", raw) from None
    if not isinstance(data, dict):
        raise _malformed("the local model's reply is not a JSON object", raw)
    if "tool" in data:
        name = data.get("tool")
        if not isinstance(name, str) or name not in offered:
            raise _malformed(
                f"the local model called {name!r}, which is not an offered tool "
                f"({', '.join(offered) or 'none'})",
                raw,
            )
        arguments = data.get("arguments", {})
        if not isinstance(arguments, dict):
            raise _malformed(f"the local model's arguments for {name} are not an object", raw)
        call = ToolCall(new_call_id(), name, json.dumps(arguments, ensure_ascii=False))
        return ParsedReply(None, call, "tool_calls")
    answer = data.get("answer")
    if isinstance(answer, str):
        return ParsedReply(answer, None, finish_reason)
    raise _malformed("the local model's reply has neither 'tool' nor 'answer'", raw)
