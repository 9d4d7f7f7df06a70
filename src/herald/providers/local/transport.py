"""`LocalTransport`: the ``local`` API mode, a GGUF model run in-process by llama.cpp.

`build_request` is pure (no llama.cpp import, no model load): it rewrites the
messages for the model's template (see `prompting`) and records the reply
schema (see `grammar`). `call` loads the model on first use, takes the
process-wide generation lock, and runs ``Llama.create_chat_completion`` with
the reply grammar.

It always generates in streaming mode internally, so that ``cancel`` and the
timeout are checked between tokens even when the caller asked for a
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
from dataclasses import dataclass
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
    answer_only_grammar,
    compile_reply_grammar,
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
_LOCK_POLL_SECONDS = 0.05


@dataclass
class _Generation:
    raw: str
    finish_reason: str
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
        return len(self.loaded_model().llama.tokenize(text.encode("utf-8"), add_bos=False))

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
        ``tool_choice`` (OpenAI style) and ``seed``; other extras are ignored."""
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
        grammar, offered = _reply_grammar(request)
        self._acquire_generation_lock(cancel, deadline)
        try:
            return self._respond(
                loaded,
                request,
                grammar,
                offered,
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
                raise ProviderError(
                    f"the local model was busy with another request for {self.timeout:.0f}s",
                    provider=self.provider,
                    kind="timeout",
                )
        if cancel is not None and cancel.is_set():
            GENERATION_LOCK.release()
            raise CallCancelled("the local model call was cancelled")

    def _respond(
        self,
        loaded: LoadedModel,
        request: dict[str, Any],
        grammar: Any,
        offered: list[str],
        *,
        on_delta: DeltaCallback | None,
        cancel: threading.Event | None,
        deadline: float,
    ) -> NormalizedResponse:
        try:
            prompt_tokens = len(loaded.render(request["messages"]).tokens)
        except Exception as exc:  # jinja2 errors, or a template's raise_exception()
            raise ProviderError(
                f"the model's chat template could not render this conversation: {exc}",
                provider=self.provider,
            ) from exc
        if prompt_tokens >= loaded.n_ctx:
            raise ProviderError(
                f"prompt is too long: {prompt_tokens} tokens exceed the model's context "
                f"window of {loaded.n_ctx} tokens",
                provider=self.provider,
                code="context_length_exceeded",
            )

        def generate(with_grammar: Any) -> _Generation:
            return self._generate(
                loaded,
                request,
                with_grammar,
                prompt_tokens,
                on_delta=on_delta,
                cancel=cancel,
                deadline=deadline,
            )

        first = generate(grammar)
        common: dict[str, Any] = {"model": request.get("model"), "response_id": first.response_id}
        if grammar is None:
            usage = Usage(prompt_tokens, first.completion_tokens)
            return NormalizedResponse(
                first.raw, finish_reason=first.finish_reason, usage=usage, **common
            )
        reply = parse_reply(first.raw, offered, first.finish_reason)
        completion_tokens = first.completion_tokens
        if reply.tool_call is not None and _repeats(reply, request):
            from llama_cpp.llama_grammar import LlamaGrammar

            second = generate(LlamaGrammar.from_string(answer_only_grammar(), verbose=False))
            completion_tokens += second.completion_tokens
            reply = parse_reply(second.raw, offered, second.finish_reason)
        # prompt_tokens measures the context once even when it was read twice.
        usage = Usage(prompt_tokens, completion_tokens)
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
        grammar: Any,
        prompt_tokens: int,
        *,
        on_delta: DeltaCallback | None,
        cancel: threading.Event | None,
        deadline: float,
    ) -> _Generation:
        llama = loaded.llama
        max_tokens = max(1, min(int(request["max_tokens"]), loaded.n_ctx - prompt_tokens))
        answer_stream = AnswerStream() if grammar is not None else None
        pieces: list[str] = []
        finish_reason = "length"
        response_id: str | None = None
        chunks = llama.create_chat_completion(
            messages=request["messages"],
            grammar=grammar,
            stream=True,
            max_tokens=max_tokens,
            temperature=float(request["temperature"]),
            seed=request.get("seed"),
            # A 135M model loops on its own phrases ("I'm here to help… I'm here to help…").
            # A frequency penalty on generated tokens stops that; llama.cpp's repeat
            # penalty would also punish the prompt's reply format and make it echo it.
            repeat_penalty=1.0,
            frequency_penalty=FREQUENCY_PENALTY,
        )
        try:
            for chunk in chunks:
                _raise_if_cancelled(cancel)
                if time.monotonic() > deadline:
                    raise ProviderError(
                        f"the local model did not finish within {self.timeout:.0f}s",
                        provider=self.provider,
                        kind="timeout",
                    )
                response_id = response_id or chunk.get("id")
                choice = chunk["choices"][0]
                if choice.get("finish_reason"):
                    finish_reason = choice["finish_reason"]
                piece = choice["delta"].get("content") or ""
                if not piece:
                    continue
                pieces.append(piece)
                text = answer_stream.feed(piece) if answer_stream is not None else piece
                if text and on_delta is not None:
                    on_delta(StreamDelta("text", text))
        except (RuntimeError, ValueError) as exc:
            raise ProviderError(
                f"llama.cpp failed while generating: {exc}", provider=self.provider
            ) from exc
        finally:
            chunks.close()
        # Streamed chunks carry no usage, so count as llama-cpp-python's own
        # non-streaming usage does: n_tokens holds prompt + evaluated output, and a
        # reply cut by max_tokens has its last token sampled but not evaluated.
        completion_tokens = max(0, llama.n_tokens - prompt_tokens + (finish_reason == "length"))
        return _Generation("".join(pieces), finish_reason, completion_tokens, response_id)


def _reply_grammar(request: dict[str, Any]) -> tuple[Any, list[str]]:
    """The llama.cpp grammar for the request's reply protocol (None for plain text)
    and the names of the tools it offers."""
    if request.get("reply_schema") is None:
        return None, []
    from llama_cpp.llama_grammar import LlamaGrammar

    specs = parse_tools([{"type": "function", "function": t} for t in request["tools"]])
    raw_choice = request.get("tool_choice") or {}
    choice = ToolChoice(raw_choice.get("mode", "auto"), raw_choice.get("name"))
    gbnf, _loose = compile_reply_grammar(specs, choice)
    return LlamaGrammar.from_string(gbnf, verbose=False), [s.name for s in specs]


def _repeats(reply: ParsedReply, request: dict[str, Any]) -> bool:
    call = reply.tool_call
    if call is None:
        return False
    return canonical_call(call.name, call.arguments) in (request.get("answered_calls") or [])


def _raise_if_cancelled(cancel: threading.Event | None) -> None:
    if cancel is not None and cancel.is_set():
        raise CallCancelled("the local model call was cancelled")
