"""The Anthropic messages transport, on the official `anthropic` SDK.

`build_request` converts the neutral (OpenAI-shaped) history with
`anthropic_convert`; `call` reads either the SDK's raw event stream or a whole
message and normalizes it. Like the chat transport, a server that refuses to
stream is remembered and asked without streaming from then on.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from herald.providers._http import CallScope, build_http_client, split_known_params
from herald.providers._sdk_base import SdkTransport, build_response
from herald.providers.anthropic_convert import (
    DEFAULT_MAX_TOKENS,
    add_cache_breakpoints,
    convert_messages,
    convert_tools,
)
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
    import anthropic

STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
}


def _int(value: Any) -> int:
    return int(value) if isinstance(value, (int, float)) else 0


class _UsageParts:
    """Anthropic reports usage in pieces (message_start, then message_delta)."""

    def __init__(self) -> None:
        self.input = self.cache_read = self.cache_write = self.output = self.thinking = 0
        self.seen = False

    def update(self, raw: Any) -> None:
        if raw is None:
            return
        self.seen = True
        for attr, name in (
            ("input", "input_tokens"),
            ("cache_read", "cache_read_input_tokens"),
            ("cache_write", "cache_creation_input_tokens"),
            ("output", "output_tokens"),
        ):
            value = getattr(raw, name, None)
            if value is not None:
                setattr(self, attr, _int(value))
        details = getattr(raw, "output_tokens_details", None)
        if details is not None and getattr(details, "thinking_tokens", None) is not None:
            self.thinking = _int(details.thinking_tokens)

    def usage(self) -> Usage | None:
        if not self.seen:
            return None
        return Usage(
            prompt_tokens=self.input + self.cache_read + self.cache_write,
            completion_tokens=self.output,
            cache_read_tokens=self.cache_read,
            cache_write_tokens=self.cache_write,
            reasoning_tokens=self.thinking,
        )


def _finish(
    text: str,
    reasoning: str,
    calls: list[ToolCall],
    stop_reason: str | None,
    usage: Usage | None,
    model: str | None,
    response_id: str | None,
) -> NormalizedResponse:
    finish = STOP_REASONS.get(stop_reason or "end_turn", stop_reason or "stop")
    return build_response(
        text=text,
        reasoning=reasoning,
        tool_calls=calls,
        finish_reason=finish,
        usage=usage,
        model=model,
        response_id=response_id,
    )


class _EventAssembler:
    """Folds the raw SSE events of one streamed message into a response."""

    def __init__(self, on_delta: DeltaCallback | None):
        self.on_delta = on_delta
        self.blocks: dict[int, dict[str, Any]] = {}
        self.usage = _UsageParts()
        self.stop_reason: str | None = None
        self.model: str | None = None
        self.response_id: str | None = None
        self.finished = False

    def _emit(self, kind: Any, text: str) -> None:
        if self.on_delta is not None and text:
            self.on_delta(StreamDelta(kind, text))

    def add(self, event: Any) -> None:
        etype = getattr(event, "type", None)
        if etype == "message_start":
            message = event.message
            self.model = getattr(message, "model", None)
            self.response_id = getattr(message, "id", None)
            self.usage.update(getattr(message, "usage", None))
        elif etype == "content_block_start":
            self._start_block(event.index, event.content_block)
        elif etype == "content_block_delta":
            self._add_delta(event.index, event.delta)
        elif etype == "message_delta":
            reason = getattr(event.delta, "stop_reason", None)
            if reason:
                self.stop_reason = reason
            self.usage.update(getattr(event, "usage", None))
        elif etype == "message_stop":
            self.finished = True

    def _start_block(self, index: int, block: Any) -> None:
        btype = getattr(block, "type", None)
        slot: dict[str, Any] = {"type": btype, "parts": []}
        if btype == "text" and getattr(block, "text", ""):
            slot["parts"].append(block.text)
            self._emit("text", block.text)
        elif btype == "thinking" and getattr(block, "thinking", ""):
            slot["parts"].append(block.thinking)
            self._emit("reasoning", block.thinking)
        elif btype == "tool_use":
            slot["id"] = block.id
            slot["name"] = block.name
            initial = getattr(block, "input", None)
            slot["initial"] = initial if initial else None
            self._emit("tool_call", block.name)
        self.blocks[index] = slot

    def _add_delta(self, index: int, delta: Any) -> None:
        slot = self.blocks.setdefault(index, {"type": None, "parts": []})
        dtype = getattr(delta, "type", None)
        if dtype == "text_delta":
            slot["parts"].append(delta.text)
            self._emit("text", delta.text)
        elif dtype == "thinking_delta":
            slot["parts"].append(delta.thinking)
            self._emit("reasoning", delta.thinking)
        elif dtype == "input_json_delta":
            slot["parts"].append(delta.partial_json)

    def result(self) -> NormalizedResponse:
        if not self.finished:
            raise ProviderError("the response stream ended before message_stop", kind="connection")
        text, reasoning, calls = [], [], []
        for _, slot in sorted(self.blocks.items()):
            if slot["type"] == "text":
                text.append("".join(slot["parts"]))
            elif slot["type"] == "thinking":
                reasoning.append("".join(slot["parts"]))
            elif slot["type"] == "tool_use":
                args = "".join(slot["parts"])
                if not args.strip():
                    initial = slot.get("initial")
                    args = json.dumps(initial, ensure_ascii=False) if initial else "{}"
                calls.append(ToolCall(id=slot["id"], name=slot["name"], arguments=args))
        return _finish(
            "".join(text),
            "\n\n".join(r for r in reasoning if r),
            calls,
            self.stop_reason,
            self.usage.usage(),
            self.model,
            self.response_id,
        )


def parse_message(message: Any) -> NormalizedResponse:
    if isinstance(message, (str, bytes)) or not hasattr(message, "content"):
        raise ProviderError(
            "the provider did not return a message",
            kind="malformed_response",
            body=str(message)[:2000],
        )
    text, reasoning, calls = [], [], []
    for block in message.content or []:
        btype = getattr(block, "type", None)
        if btype == "text":
            text.append(block.text)
        elif btype == "thinking":
            reasoning.append(block.thinking)
        elif btype == "tool_use":
            calls.append(
                ToolCall(
                    id=block.id,
                    name=block.name,
                    arguments=json.dumps(block.input, ensure_ascii=False),
                )
            )
    usage = _UsageParts()
    usage.update(getattr(message, "usage", None))
    return _finish(
        "".join(text),
        "\n\n".join(r for r in reasoning if r),
        calls,
        getattr(message, "stop_reason", None),
        usage.usage(),
        getattr(message, "model", None),
        getattr(message, "id", None),
    )


class AnthropicMessagesTransport(SdkTransport):
    api_mode = "anthropic_messages"

    def build_request(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        settings: CallSettings,
    ) -> dict[str, Any]:
        system, turns = convert_messages(messages)
        add_cache_breakpoints(system, turns)
        request: dict[str, Any] = {
            "model": settings.model,
            "max_tokens": settings.max_tokens or DEFAULT_MAX_TOKENS,
            "messages": turns,
        }
        if system:
            request["system"] = system
        if tools:
            request["tools"] = convert_tools(tools)
        if settings.temperature is not None:
            request["temperature"] = settings.temperature
        request.update(settings.extra)
        return request

    def _new_client(self) -> anthropic.Anthropic:
        import anthropic

        return anthropic.Anthropic(
            api_key=self.api_key or "",  # explicit, so the SDK never looks in the environment
            base_url=self.base_url or "https://api.anthropic.com",
            max_retries=0,
            timeout=self.timeout,
            http_client=build_http_client(self.timeout),
            open_telemetry=False,
        )

    def _create(self, request: dict[str, Any]) -> Any:
        create = self._sdk().messages.create
        return self._sdk_call(create, **split_known_params(create, request))

    def _call_streaming(
        self, request: dict[str, Any], on_delta: DeltaCallback | None, scope: CallScope
    ) -> NormalizedResponse:
        assembler = _EventAssembler(on_delta)
        stream = self._create({**request, "stream": True})
        self._consume(stream, scope, assembler.add)
        return assembler.result()

    def _call_plain(self, request: dict[str, Any], scope: CallScope) -> NormalizedResponse:
        message = self._create(request)
        if scope.cancelled:
            raise CallCancelled("the model call was cancelled")
        return parse_message(message)
