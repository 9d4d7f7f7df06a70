"""`LocalTransport`: the ``local`` API mode, a GGUF model run in-process by llama.cpp
(through xllamacpp's embedded llama.cpp server, see `runtime`).

`build_request` is pure (no llama.cpp import, no model load): it rewrites the
messages for the model's template (see `prompting`) and records the reply
schema (see `grammar`). `call` loads the model on first use, takes the
process-wide generation lock, and runs a chat completion constrained by the
reply schema.

It always generates in streaming mode internally, so that ``cancel`` and
``model.timeout`` (which bounds the whole call) are checked between tokens even when the caller asked for a
non-streaming call; ``on_delta`` is only called when ``stream`` is true. Without
tools the deltas are plain text; with tools they are the characters of the
``answer`` string as it is generated (nothing is streamed for a tool call).

One quirk is handled here rather than left to the engine: when the chat ends
with tool results and the model calls one of those very calls again (same
tool, same arguments), which SmolLM2-135M does by habit, it is asked once more
with a grammar that only admits an answer.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from herald.providers.base import (
    CallCancelled,
    CallSettings,
    DeltaCallback,
    NormalizedResponse,
    ProviderError,
    ProviderTransport,
    StreamDelta,
    Usage,
)
from herald.providers.local.grammar import (
    ToolChoice,
    all_loose,
    answer_only_schema,
    parse_tool_choice,
    parse_tools,
    reply_schema,
)
from herald.providers.local.model_file import resolve_model_path
from herald.providers.local.prompting import answered_calls, canonical_call, render_messages
from herald.providers.local.reply import AnswerStream, ParsedReply, parse_reply
from herald.providers.local.runtime import GENERATION_LOCK, LoadedModel, load_model

DEFAULT_MAX_TOKENS = 384
FREQUENCY_PENALTY = 0.6
DEFAULT_TEMPERATURE = 0.2
DEFAULT_SEED = 1
_LOCK_POLL_SECONDS = 0.05


@dataclass
class _Generation:
    raw: str
    finish_reason: str
    prompt_tokens: int
    completion_tokens: int
    response_id: str | None


class LocalTransport(ProviderTransport):
    """A small GGUF model in this process (by default the bundled SmolLM2-135M, an
    offline demo, not a capable assistant)."""

    api_mode = "local"

    def __init__(
        self,
        *,
        provider: str = "local",
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 120.0,
        model_path: str | None = None,
        n_threads: int | None = None,
    ):
        super().__init__(provider=provider, base_url=base_url, api_key=api_key, timeout=timeout)
        self.model_path = model_path
        self.n_threads = n_threads
        self._loaded: LoadedModel | None = None

    # -- model ---------------------------------------------------------------

    def resolved_model_path(self) -> Path:
        return resolve_model_path(self.model_path)

    def loaded_model(self) -> LoadedModel:
        """The loaded model (loads it on first use; shared by the whole process)."""
        if self._loaded is None:
            self._loaded = load_model(self.resolved_model_path(), n_threads=self.n_threads)
        return self._loaded

    def context_length(self) -> int:
        """The context window in tokens: the model file's trained context (loads the
        model if no call has yet)."""
        return self.loaded_model().n_ctx

    def count_tokens(self, text: str) -> int:
        return len(self.loaded_model().tokenize(text))

    def render_prompt(self, request: dict[str, Any]) -> str:
        """The exact prompt text llama.cpp tokenizes for `request`."""
        return self.loaded_model().render(request["messages"]).text

    # -- request -------------------------------------------------------------

    def build_request(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        settings: CallSettings,
    ) -> dict[str, Any]:
        """The rendered chat plus generation settings. ``settings.extra`` may carry
        ``tool_choice`` (OpenAI style), ``seed`` and ``cache_prompt``; other extras
        are ignored."""
        specs = parse_tools(tools)
        choice = parse_tool_choice(settings.extra.get("tool_choice"), [s.name for s in specs])
        if choice.mode == "none":
            specs = []
        return {
            "model": settings.model,
            "messages": render_messages(messages, specs, choice),
            "tools": [
                {"name": s.name, "description": s.description, "parameters": s.parameters}
                for s in specs
            ],
            "tool_choice": choice.to_json(),
            "reply_schema": reply_schema(specs, choice),
            "answered_calls": answered_calls(messages) if choice.mode == "auto" else [],
            "max_tokens": settings.max_tokens or DEFAULT_MAX_TOKENS,
            "temperature": (
                DEFAULT_TEMPERATURE if settings.temperature is None else settings.temperature
            ),
            "seed": settings.extra.get("seed"),
            # False makes llama.cpp evaluate the whole prompt (benchmarks of a cold call).
            "cache_prompt": bool(settings.extra.get("cache_prompt", True)),
        }

    # -- call ----------------------------------------------------------------

    def call(
        self,
        request: dict[str, Any],
        *,
        stream: bool = True,
        on_delta: DeltaCallback | None = None,
        cancel: threading.Event | None = None,
    ) -> NormalizedResponse:
        deadline = time.monotonic() + self.timeout
        _raise_if_cancelled(cancel)
        loaded = self.loaded_model()
        self._acquire_generation_lock(cancel, deadline)
        try:
            if time.monotonic() > deadline:
                raise self._timeout_error("did not start")
            return self._respond(
                loaded,
                request,
                on_delta=on_delta if stream else None,
                cancel=cancel,
                deadline=deadline,
            )
        finally:
            GENERATION_LOCK.release()

    def _acquire_generation_lock(self, cancel: threading.Event | None, deadline: float) -> None:
        # Poll rather than block, so that a cancel or the timeout ends the wait.
        while not GENERATION_LOCK.acquire(timeout=_LOCK_POLL_SECONDS):
            _raise_if_cancelled(cancel)
            if time.monotonic() > deadline:
                raise self._timeout_error("was busy with another request and did not start")
        if cancel is not None and cancel.is_set():
            GENERATION_LOCK.release()
            raise CallCancelled("the local model call was cancelled")

    def _respond(
        self,
        loaded: LoadedModel,
        request: dict[str, Any],
        *,
        on_delta: DeltaCallback | None,
        cancel: threading.Event | None,
        deadline: float,
    ) -> NormalizedResponse:
        specs = _request_tools(request)
        offered = [s.name for s in specs]

        def generate(schema: dict[str, Any] | None) -> _Generation:
            return self._generate(
                loaded, request, schema, on_delta=on_delta, cancel=cancel, deadline=deadline
            )

        schema = request.get("reply_schema")
        try:
            first = generate(schema)
        except _SchemaRefused:
            # llama.cpp could not compile some tool's parameter schema: hold every
            # tool's arguments to "a JSON object" and keep the rest of the protocol.
            raw_choice = request.get("tool_choice") or {}
            choice = ToolChoice(raw_choice.get("mode", "auto"), raw_choice.get("name"))
            schema = reply_schema(specs, choice, loose=all_loose(specs))
            first = generate(schema)
        common: dict[str, Any] = {"model": request.get("model"), "response_id": first.response_id}
        if schema is None:
            usage = Usage(first.prompt_tokens, first.completion_tokens)
            return NormalizedResponse(
                first.raw, finish_reason=first.finish_reason, usage=usage, **common
            )
        reply = parse_reply(first.raw, offered, first.finish_reason)
        completion_tokens = first.completion_tokens
        if reply.tool_call is not None and _repeats(reply, request):
            second = generate(answer_only_schema())
            completion_tokens += second.completion_tokens
            reply = parse_reply(second.raw, offered, second.finish_reason)
        # prompt_tokens measures the context once even when it was read twice.
        usage = Usage(first.prompt_tokens, completion_tokens)
        if reply.tool_call is not None:
            return NormalizedResponse(
                None, [reply.tool_call], finish_reason="tool_calls", usage=usage, **common
            )
        return NormalizedResponse(
            reply.text, finish_reason=reply.finish_reason, usage=usage, **common
        )

    def _generate(
        self,
        loaded: LoadedModel,
        request: dict[str, Any],
        schema: dict[str, Any] | None,
        *,
        on_delta: DeltaCallback | None,
        cancel: threading.Event | None,
        deadline: float,
    ) -> _Generation:
        answer_stream = AnswerStream() if schema is not None else None
        body: dict[str, Any] = {
            "messages": request["messages"],
            "stream": True,
            "stream_options": {"include_usage": True},
            "max_tokens": int(request["max_tokens"]),
            "temperature": float(request["temperature"]),
            # A 135M model loops on its own phrases ("I'm here to help… I'm here to help…").
            # A frequency penalty on generated tokens stops that; llama.cpp's repeat
            # penalty would also punish the prompt's reply format and make it echo it.
            "repeat_penalty": 1.0,
            "frequency_penalty": FREQUENCY_PENALTY,
            "cache_prompt": bool(request.get("cache_prompt", True)),
        }
        # A fixed default seed: the same chat gives the same demo answer every run.
        seed = request.get("seed")
        body["seed"] = DEFAULT_SEED if seed is None else int(seed)
        if schema is not None:
            body["json_schema"] = schema
        state = _StreamState()

        def on_chunk(chunk: dict[str, Any]) -> bool:
            # Returning True stops llama.cpp's generation at once.
            if cancel is not None and cancel.is_set():
                state.stopped = "cancelled"
                return True
            if time.monotonic() > deadline:
                state.stopped = "timeout"
                return True
            if "error" in chunk:
                state.error = chunk["error"]
                return True
            state.response_id = state.response_id or chunk.get("id")
            usage = chunk.get("usage")
            if usage:
                state.prompt_tokens = int(usage.get("prompt_tokens") or 0)
                state.completion_tokens = int(usage.get("completion_tokens") or 0)
            for choice in chunk.get("choices") or []:
                if choice.get("finish_reason"):
                    state.finish_reason = choice["finish_reason"]
                piece = (choice.get("delta") or {}).get("content") or ""
                if not piece:
                    continue
                state.pieces.append(piece)
                text = answer_stream.feed(piece) if answer_stream is not None else piece
                if text and on_delta is not None:
                    on_delta(StreamDelta("text", text))
            return False

        try:
            returned = loaded.server.handle_chat_completions(body, on_chunk)
        except (RuntimeError, ValueError) as exc:
            if schema is not None and "schema" in str(exc).lower():
                raise _SchemaRefused(str(exc)) from exc
            raise ProviderError(
                f"llama.cpp failed while generating: {exc}", provider=self.provider
            ) from exc
        if isinstance(returned, dict) and "error" in returned:
            state.error = returned["error"]
        if state.stopped == "cancelled":
            raise CallCancelled("the local model call was cancelled")
        if state.stopped == "timeout":
            raise self._timeout_error("did not finish")
        if state.error is not None:
            raise self._server_error(state.error, schema)
        return _Generation(
            "".join(state.pieces),
            state.finish_reason,
            state.prompt_tokens,
            state.completion_tokens,
            state.response_id,
        )

    def _timeout_error(self, what: str) -> ProviderError:
        return ProviderError(
            f"the local model {what} within model.timeout ({self.timeout:g}s)",
            provider=self.provider,
            kind="timeout",
        )

    def _server_error(self, error: Any, schema: dict[str, Any] | None) -> ProviderError:
        detail = error if isinstance(error, dict) else {"message": str(error)}
        message = str(detail.get("message") or detail)
        if detail.get("type") == "exceed_context_size_error":
            return ProviderError(
                f"prompt is too long: {message}",
                provider=self.provider,
                code="context_length_exceeded",
                status=400,
            )
        if schema is not None and any(w in message.lower() for w in ("grammar", "schema")):
            raise _SchemaRefused(message)
        return ProviderError(f"llama.cpp refused the request: {message}", provider=self.provider)


class _SchemaRefused(Exception):
    """llama.cpp could not compile the reply schema."""


@dataclass
class _StreamState:
    pieces: list[str] = field(default_factory=list)
    finish_reason: str = "length"
    prompt_tokens: int = 0
    completion_tokens: int = 0
    response_id: str | None = None
    stopped: str | None = None
    error: Any = None


def _request_tools(request: dict[str, Any]) -> list[Any]:
    return parse_tools([{"type": "function", "function": t} for t in request.get("tools") or []])


def _repeats(reply: ParsedReply, request: dict[str, Any]) -> bool:
    call = reply.tool_call
    if call is None:
        return False
    return canonical_call(call.name, call.arguments) in (request.get("answered_calls") or [])


def _raise_if_cancelled(cancel: threading.Event | None) -> None:
    if cancel is not None and cancel.is_set():
        raise CallCancelled("the local model call was cancelled")
