"""The OpenAI chat-completions transport (OpenAI, OpenRouter, any compatible server:
Ollama, vLLM, llama.cpp …), on the official `openai` SDK.

Requests are made byte-stable for providers' prefix caches: tool-call arguments
are re-serialized canonically and trailing whitespace is trimmed (except in the
already-frozen system prompt), so the same history always produces the same
bytes. Streaming is the default; a server that refuses to stream is remembered
and asked without streaming from then on.
"""

from __future__ import annotations

import json
import uuid
from typing import TYPE_CHECKING, Any

from herald.providers._http import CallScope, build_http_client, split_known_params
from herald.providers._sdk_base import SdkTransport, build_response
from herald.providers.base import (
    CallCancelled,
    CallSettings,
    DeltaCallback,
    NormalizedResponse,
    ProviderError,
    StreamDelta,
    ToolCall,
    Usage,
)

if TYPE_CHECKING:
    import openai

# Message keys the chat-completions API accepts; anything else Herald keeps on a
# message (timestamps, reasoning) stays out of the request.
MESSAGE_KEYS = ("role", "content", "name", "tool_calls", "tool_call_id")
SYSTEM_ROLES = ("system", "developer")
PLACEHOLDER_KEY = "no-key"  # key-less local servers; the SDK insists on some key


def canonical_arguments(arguments: Any) -> Any:
    """Tool-call arguments as compact sorted-key JSON when they parse; verbatim otherwise."""
    if not isinstance(arguments, str):
        return arguments
    try:
        parsed = json.loads(arguments)
    except ValueError:
        return arguments
    return json.dumps(parsed, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _trim_content(content: Any) -> Any:
    if isinstance(content, str):
        return content.rstrip()
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                part = {**part, "text": part["text"].rstrip()}
            parts.append(part)
        return parts
    return content


def stable_message(message: dict[str, Any]) -> dict[str, Any]:
    """A copy of `message` for the wire (the caller's dict is never mutated).

    System content goes verbatim: it is already frozen bytes for the whole
    session (DESIGN invariant 1), and what was stored is exactly what is sent."""
    out = {k: message[k] for k in MESSAGE_KEYS if k in message}
    if "content" in out and out.get("role") not in SYSTEM_ROLES:
        out["content"] = _trim_content(out["content"])
    if out.get("tool_calls"):
        calls = []
        for call in out["tool_calls"]:
            fn = call.get("function") or {}
            calls.append(
                {
                    "id": call.get("id", ""),
                    "type": call.get("type", "function"),
                    "function": {
                        "name": fn.get("name", ""),
                        "arguments": canonical_arguments(fn.get("arguments", "")),
                    },
                }
            )
        out["tool_calls"] = calls
    elif "tool_calls" in out:
        del out["tool_calls"]  # an empty list is rejected by some servers
    return out


def _extra(obj: Any, *names: str) -> Any:
    """A field that is not in the SDK's model (reasoning_content, reasoning …)."""
    for name in names:
        value = getattr(obj, name, None)
        if value is None:
            extra = getattr(obj, "model_extra", None) or {}
            value = extra.get(name)
        if value is not None:
            return value
    return None


def normalize_usage(raw: Any) -> Usage | None:
    if raw is None:
        return None
    details = getattr(raw, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) if details is not None else None
    written = _extra(details, "cache_write_tokens", "cache_creation_tokens") if details else None
    if written is None:
        written = _extra(raw, "cache_creation_input_tokens")
    completion_details = getattr(raw, "completion_tokens_details", None)
    reasoning = (
        getattr(completion_details, "reasoning_tokens", None) if completion_details else None
    )
    return Usage(
        prompt_tokens=int(getattr(raw, "prompt_tokens", 0) or 0),
        completion_tokens=int(getattr(raw, "completion_tokens", 0) or 0),
        cache_read_tokens=int(cached or 0),
        cache_write_tokens=int(written or 0),
        reasoning_tokens=int(reasoning or 0),
    )


def _finish(
    text: str,
    reasoning: str,
    tool_calls: list[ToolCall],
    finish_reason: str | None,
    usage: Usage | None,
    model: str | None,
    response_id: str | None,
) -> NormalizedResponse:
    return build_response(
        text=text,
        reasoning=reasoning,
        tool_calls=tool_calls,
        finish_reason=finish_reason or "stop",
        usage=usage,
        model=model,
        response_id=response_id,
    )


class _StreamAssembler:
    """Folds chat-completion chunks into one response."""

    def __init__(self, on_delta: DeltaCallback | None):
        self.on_delta = on_delta
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.finish_reason: str | None = None
        self.usage: Usage | None = None
        self.model: str | None = None
        self.response_id: str | None = None

    def _emit(self, kind: Any, text: str) -> None:
        if self.on_delta is not None and text:
            self.on_delta(StreamDelta(kind, text))

    def add(self, chunk: Any) -> None:
        self.model = getattr(chunk, "model", None) or self.model
        self.response_id = getattr(chunk, "id", None) or self.response_id
        if getattr(chunk, "usage", None) is not None:
            self.usage = normalize_usage(chunk.usage)
        for choice in getattr(chunk, "choices", None) or []:
            if getattr(choice, "index", 0) not in (0, None):
                continue
            delta = getattr(choice, "delta", None)
            if delta is not None:
                self._add_delta(delta)
            if choice.finish_reason:
                self.finish_reason = choice.finish_reason

    def _add_delta(self, delta: Any) -> None:
        reasoning = _extra(delta, "reasoning_content", "reasoning")
        if isinstance(reasoning, str) and reasoning:
            self.reasoning.append(reasoning)
            self._emit("reasoning", reasoning)
        if delta.content:
            self.text.append(delta.content)
            self._emit("text", delta.content)
        for fragment in delta.tool_calls or []:
            index = fragment.index if fragment.index is not None else len(self.calls)
            slot = self.calls.setdefault(index, {"id": None, "name": "", "args": []})
            if fragment.id:
                slot["id"] = fragment.id
            fn = fragment.function
            if fn is not None:
                if fn.name and not slot["name"]:
                    # Some servers repeat the name in every fragment; the first counts.
                    slot["name"] = fn.name
                    self._emit("tool_call", fn.name)
                if fn.arguments:
                    slot["args"].append(fn.arguments)

    def result(self) -> NormalizedResponse:
        # The usage chunk comes last, so having it means the stream was not cut.
        if self.finish_reason is None and self.usage is None:
            raise ProviderError(
                "the response stream ended before the model finished", kind="connection"
            )
        calls = [
            ToolCall(
                id=slot["id"] or f"call_{uuid.uuid4().hex[:24]}",
                name=slot["name"],
                arguments="".join(slot["args"]) or "{}",
            )
            for _, slot in sorted(self.calls.items())
        ]
        return _finish(
            "".join(self.text),
            "".join(self.reasoning),
            calls,
            self.finish_reason,
            self.usage,
            self.model,
            self.response_id,
        )


def parse_completion(completion: Any) -> NormalizedResponse:
    if isinstance(completion, (str, bytes)) or not hasattr(completion, "choices"):
        raise ProviderError(
            "the provider did not return a chat completion",
            kind="malformed_response",
            body=str(completion)[:2000],
        )
    choices = completion.choices or []
    if not choices:
        raise ProviderError("the provider returned no choices", kind="empty_response")
    choice = choices[0]
    message = choice.message
    calls = [
        ToolCall(
            id=call.id or f"call_{uuid.uuid4().hex[:24]}",
            name=call.function.name,
            arguments=call.function.arguments or "{}",
        )
        for call in (message.tool_calls or [])
        if getattr(call, "function", None) is not None
    ]
    reasoning = _extra(message, "reasoning_content", "reasoning")
    return _finish(
        message.content or "",
        reasoning if isinstance(reasoning, str) else "",
        calls,
        choice.finish_reason,
        normalize_usage(completion.usage),
        completion.model,
        completion.id,
    )


class OpenAIChatTransport(SdkTransport):
    api_mode = "chat_completions"

    def build_request(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        settings: CallSettings,
    ) -> dict[str, Any]:
        request: dict[str, Any] = {
            "model": settings.model,
            "messages": [stable_message(m) for m in messages],
        }
        if tools:
            request["tools"] = list(tools)
        if settings.max_tokens:
            # OpenAI's own API wants max_completion_tokens (reasoning models reject
            # max_tokens); compatible servers mostly know only max_tokens.
            key = "max_completion_tokens" if self.provider == "openai" else "max_tokens"
            request[key] = settings.max_tokens
        if settings.temperature is not None:
            request["temperature"] = settings.temperature
        request.update(settings.extra)
        return request

    def _new_client(self) -> openai.OpenAI:
        import openai

        headers = {"X-Title": "Herald"} if self.provider == "openrouter" else None
        client = openai.OpenAI(
            api_key=self.api_key or PLACEHOLDER_KEY,
            base_url=self.base_url or "https://api.openai.com/v1",
            max_retries=0,
            timeout=self.timeout,
            http_client=build_http_client(self.timeout),
            default_headers=headers,
        )
        # Herald's secrets come through one accessor, not the SDK's env lookup.
        client.organization = None
        client.project = None
        client.admin_api_key = None
        return client

    def _create(self, request: dict[str, Any]) -> Any:
        create = self._sdk().chat.completions.create
        return self._sdk_call(create, **split_known_params(create, request))

    def _call_streaming(
        self, request: dict[str, Any], on_delta: DeltaCallback | None, scope: CallScope
    ) -> NormalizedResponse:
        assembler = _StreamAssembler(on_delta)
        stream = self._create(
            {**request, "stream": True, "stream_options": {"include_usage": True}}
        )
        self._consume(stream, scope, assembler.add)
        return assembler.result()

    def _call_plain(self, request: dict[str, Any], scope: CallScope) -> NormalizedResponse:
        completion = self._create({**request, "stream": False})
        if scope.cancelled:
            raise CallCancelled("the model call was cancelled")
        return parse_completion(completion)
