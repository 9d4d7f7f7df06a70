"""Chat completions: what a request asks for, and the reply objects and SSE chunks.

Semantics (also in the API docs and the README):

- With a session key (the `X-Herald-Session` header, else `user`, else
  `safety_identifier`) Herald keeps that session's history itself, so a request
  contributes only its LAST `user` message as the new input; earlier client messages
  are ignored, except leading `system`/`developer` messages, which become the
  session's caller system message (used when the session's system prompt is built,
  i.e. on its first turn; the prompt is then frozen for the session).
- Without one, the conversation is the request's messages (OpenAI's stateless
  semantics): see `conversations`.
"""

from __future__ import annotations

import json
import secrets as secrets_module
import time
from dataclasses import dataclass
from typing import Any

from herald.gateway.platforms.api.models import (
    AssistantMessage,
    ChatCompletion,
    ChatCompletionRequest,
    CompletionChoice,
    CompletionTokensDetails,
    CompletionUsage,
    FinishReason,
    PromptTokensDetails,
)

SESSION_HEADER = "x-herald-session"
MAX_SESSION_KEY = 128

_LENGTH_EXITS = frozenset({"budget_exhausted", "max_iterations_reached"})


class ApiRequestError(Exception):
    """A request Herald refuses; becomes an OpenAI-style error body."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        param: str | None = None,
        code: str | None = None,
        error_type: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.param = param
        self.code = code
        self.error_type = error_type or _default_type(status)


def _default_type(status: int) -> str:
    if status == 401:
        return "authentication_error"
    if status == 404:
        return "not_found_error"
    if status == 409:
        return "conflict_error"
    if status >= 500:
        return "server_error"
    return "invalid_request_error"


@dataclass(frozen=True)
class ChatInput:
    text: str
    caller_system: str | None
    session_key: str | None  # None: a stateless request (the conversation is `history`)
    history: tuple[tuple[str, str], ...] = ()  # (role, text) before the last user message


def _text_of(content: str | list[dict[str, Any]] | None, param: str) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for index, part in enumerate(content):
        kind = part.get("type")
        if kind in ("text", "input_text") and isinstance(part.get("text"), str):
            parts.append(part["text"])
        else:
            raise ApiRequestError(
                400,
                f"content part type {kind!r} is not supported; send text parts only",
                param=f"{param}[{index}].type",
            )
    return "\n".join(parts)


def check_session_key(value: str, param: str) -> str:
    key = value.strip()
    if not key:
        raise ApiRequestError(400, "the session name must not be empty", param=param)
    if len(key) > MAX_SESSION_KEY or not key.isprintable():
        raise ApiRequestError(
            400,
            f"the session name must be printable and at most {MAX_SESSION_KEY} characters",
            param=param,
        )
    return key


def interpret(request: ChatCompletionRequest, session_header: str | None) -> ChatInput:
    """The new user text, the caller's system message and the session key; raises
    `ApiRequestError` (400, naming the field) for what Herald cannot honour."""
    if request.n not in (None, 1):
        raise ApiRequestError(400, "only n=1 is supported", param="n")
    if request.tools:
        raise ApiRequestError(
            400,
            "client-side tools are not supported: Herald runs its own tools",
            param="tools",
        )
    system_parts: list[str] = []
    leading = 0
    for index, message in enumerate(request.messages):
        if message.role not in ("system", "developer"):
            break
        leading = index + 1
        text = _text_of(message.content, f"messages[{index}].content").strip()
        if text:
            system_parts.append(text)
    last_user = None
    for index in range(len(request.messages) - 1, -1, -1):
        if request.messages[index].role == "user":
            last_user = index
            break
    if last_user is None:
        raise ApiRequestError(400, "messages must contain a user message", param="messages")
    param = f"messages[{last_user}].content"
    text = _text_of(request.messages[last_user].content, param)
    if not text.strip():
        raise ApiRequestError(400, "the last user message is empty", param=param)
    if session_header is not None:
        key = check_session_key(session_header, "X-Herald-Session")
    elif request.user is not None:
        key = check_session_key(request.user, "user")
    elif request.safety_identifier is not None:
        key = check_session_key(request.safety_identifier, "safety_identifier")
    else:
        key = None
    caller_system = "\n\n".join(system_parts) or None
    if key is not None:
        return ChatInput(text=text, caller_system=caller_system, session_key=key)
    history = _history(request, leading, last_user)
    return ChatInput(text=text, caller_system=caller_system, session_key=None, history=history)


def _history(request: ChatCompletionRequest, start: int, end: int) -> tuple[tuple[str, str], ...]:
    """The client's conversation between its system messages and its new message. Only
    user and assistant text can be replayed to the model; anything else is refused by
    name rather than dropped."""
    turns: list[tuple[str, str]] = []
    for index in range(start, end):
        message = request.messages[index]
        param = f"messages[{index}]"
        if message.role not in ("user", "assistant"):
            raise ApiRequestError(
                400,
                f"a {message.role!r} message after the conversation has started is not "
                "supported without a session key (Herald runs its own tools); send user "
                "and assistant messages, or name a session with the X-Herald-Session header",
                param=f"{param}.role",
            )
        text = _text_of(message.content, f"{param}.content")
        if message.role == "assistant" and not text.strip():
            continue  # an assistant turn that only called tools carries no text to replay
        turns.append((message.role, text))
    return tuple(turns)


# ---- replies ----------------------------------------------------------------------------


def completion_id() -> str:
    return "chatcmpl-" + secrets_module.token_hex(12)


def finish_reason(exit_reason: str | None) -> FinishReason:
    if exit_reason in _LENGTH_EXITS:
        return "length"
    if exit_reason == "content_policy_blocked":
        return "content_filter"
    return "stop"


def usage_from(counts: dict[str, int]) -> CompletionUsage:
    """The runner's usage counters (Herald's names or OpenAI's) as OpenAI usage."""

    def pick(*names: str) -> int:
        for name in names:
            value = counts.get(name)
            if isinstance(value, int) and not isinstance(value, bool):
                return value
        return 0

    prompt = pick("prompt_tokens", "input_tokens")
    completion = pick("completion_tokens", "output_tokens")
    return CompletionUsage(
        prompt_tokens=prompt,
        completion_tokens=completion,
        total_tokens=pick("total_tokens") or prompt + completion,
        prompt_tokens_details=PromptTokensDetails(
            cached_tokens=pick("cache_read_tokens", "cached_tokens")
        ),
        completion_tokens_details=CompletionTokensDetails(
            reasoning_tokens=pick("reasoning_tokens")
        ),
    )


def chat_completion(
    cid: str, model: str, text: str, exit_reason: str | None, usage: CompletionUsage
) -> ChatCompletion:
    return ChatCompletion(
        id=cid,
        created=int(time.time()),
        model=model,
        choices=[
            CompletionChoice(
                message=AssistantMessage(content=text), finish_reason=finish_reason(exit_reason)
            )
        ],
        usage=usage,
    )


class ChunkWriter:
    """SSE frames of one streamed completion, in OpenAI's exact chunk format."""

    def __init__(self, cid: str, model: str, *, include_usage: bool) -> None:
        self.cid = cid
        self.model = model
        self.created = int(time.time())
        self.include_usage = include_usage

    def _frame(self, choices: list[dict[str, Any]], usage: CompletionUsage | None = None) -> bytes:
        chunk: dict[str, Any] = {
            "id": self.cid,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "system_fingerprint": None,
            "choices": choices,
        }
        # OpenAI sends `"usage": null` on every chunk when include_usage is on, and no
        # usage key at all otherwise.
        if self.include_usage:
            chunk["usage"] = usage.model_dump() if usage is not None else None
        return b"data: " + json.dumps(chunk, ensure_ascii=False).encode() + b"\n\n"

    @staticmethod
    def _choice(delta: dict[str, str], reason: FinishReason | None = None) -> dict[str, Any]:
        return {"index": 0, "delta": delta, "logprobs": None, "finish_reason": reason}

    def opening(self) -> bytes:
        return self._frame([self._choice({"role": "assistant", "content": ""})])

    def content(self, text: str) -> bytes:
        return self._frame([self._choice({"content": text})])

    def closing(self, exit_reason: str | None) -> bytes:
        return self._frame([self._choice({}, finish_reason(exit_reason))])

    def usage(self, usage: CompletionUsage) -> bytes:
        return self._frame([], usage)

    @staticmethod
    def error(error: ApiRequestError) -> bytes:
        body = {
            "error": {
                "message": error.message,
                "type": error.error_type,
                "param": error.param,
                "code": error.code,
            }
        }
        return b"data: " + json.dumps(body, ensure_ascii=False).encode() + b"\n\n"

    @staticmethod
    def done() -> bytes:
        return b"data: [DONE]\n\n"

    @staticmethod
    def keepalive() -> bytes:
        return b": keep-alive\n\n"
