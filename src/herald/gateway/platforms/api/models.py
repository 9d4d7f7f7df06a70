"""Request and response bodies of the HTTP API, as pydantic models (they are also the
OpenAPI document's schemas). Chat shapes follow OpenAI's chat-completions wire format,
so the official clients parse them unchanged."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

# ---- OpenAI-compatible requests ---------------------------------------------------------


class ChatMessageIn(BaseModel):
    """One message of the client's conversation. Only the last `user` message and a
    leading `system`/`developer` message are used; Herald keeps the history itself."""

    model_config = ConfigDict(extra="allow")

    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    content: str | list[dict[str, Any]] | None = Field(
        None, description="text, or a list of content parts (only `text` parts are accepted)"
    )
    name: str | None = None


class StreamOptions(BaseModel):
    model_config = ConfigDict(extra="allow")

    include_usage: bool = Field(False, description="send a final chunk carrying `usage`")


# Messages in one request. Far beyond any real conversation, and a bound on the work one
# stateless request can ask for (each message is validated, hashed and stored).
MAX_MESSAGES = 2048


class ChatCompletionRequest(BaseModel):
    """Sampling parameters (`temperature`, `max_tokens`, …) are accepted and ignored: the
    model and its settings come from Herald's configuration."""

    model_config = ConfigDict(extra="allow")

    model: str | None = Field(None, description="any value; the reply names the served model")
    messages: list[ChatMessageIn] = Field(..., min_length=1, max_length=MAX_MESSAGES)
    stream: bool = False
    stream_options: StreamOptions | None = None
    user: str | None = Field(
        None, description="selects the session (the `X-Herald-Session` header wins)"
    )
    safety_identifier: str | None = Field(None, description="used like `user` when that is unset")
    n: int | None = Field(None, description="must be 1 or unset")
    tools: list[Any] | None = Field(None, description="must be empty: Herald runs its own tools")


class SessionMessageRequest(BaseModel):
    content: str = Field(..., min_length=1, description="the new user message")


# ---- OpenAI-compatible responses --------------------------------------------------------


class PromptTokensDetails(BaseModel):
    cached_tokens: int = 0


class CompletionTokensDetails(BaseModel):
    reasoning_tokens: int = 0


class CompletionUsage(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    prompt_tokens_details: PromptTokensDetails | None = None
    completion_tokens_details: CompletionTokensDetails | None = None


FinishReason = Literal["stop", "length", "content_filter"]


class AssistantMessage(BaseModel):
    role: Literal["assistant"] = "assistant"
    content: str
    refusal: str | None = None


class CompletionChoice(BaseModel):
    index: int = 0
    message: AssistantMessage
    finish_reason: FinishReason = "stop"
    logprobs: None = None


class ChatCompletion(BaseModel):
    id: str
    object: Literal["chat.completion"] = "chat.completion"
    created: int
    model: str
    choices: list[CompletionChoice]
    usage: CompletionUsage
    system_fingerprint: str | None = None


class ChunkDelta(BaseModel):
    role: Literal["assistant"] | None = None
    content: str | None = None


class ChunkChoice(BaseModel):
    index: int = 0
    delta: ChunkDelta
    finish_reason: FinishReason | None = None
    logprobs: None = None


class ChatCompletionChunk(BaseModel):
    """One `data:` event of a streamed reply; the stream ends with `data: [DONE]`."""

    id: str
    object: Literal["chat.completion.chunk"] = "chat.completion.chunk"
    created: int
    model: str
    system_fingerprint: str | None = None
    choices: list[ChunkChoice]
    usage: CompletionUsage | None = None


class ModelCard(BaseModel):
    id: str
    object: Literal["model"] = "model"
    created: int
    owned_by: str = "herald"


class ModelList(BaseModel):
    object: Literal["list"] = "list"
    data: list[ModelCard]


class ErrorDetail(BaseModel):
    message: str
    type: str
    param: str | None = None
    code: str | None = None


class ErrorBody(BaseModel):
    error: ErrorDetail


# ---- Herald sessions --------------------------------------------------------------------


class SessionSummary(BaseModel):
    id: str
    title: str | None
    source: str = Field(..., description="the entrance that started it: api, cli, telegram, …")
    identity: str = Field("owner", description="whose conversation it is")
    profile: str
    model: str | None
    created_at: float
    updated_at: float
    prompt_tokens: int
    completion_tokens: int
    api_calls: int
    last_exit_reason: str | None


class SessionList(BaseModel):
    object: Literal["list"] = "list"
    data: list[SessionSummary]


class SessionToolCall(BaseModel):
    id: str | None = None
    name: str | None = None
    arguments: str | None = None


class SessionMessage(BaseModel):
    seq: int
    role: str
    content: str | None
    tool_calls: list[SessionToolCall] | None = None
    tool_name: str | None = None
    tool_call_id: str | None = None
    created_at: float


class SessionDetail(SessionSummary):
    messages: list[SessionMessage] = Field(..., description="active history, oldest first")


class SessionReply(BaseModel):
    session_id: str | None
    status: str = Field(..., description="replied, or command for a slash command")
    content: str = Field(..., description="the assistant's reply (secrets redacted)")
    exit_reason: str | None = None
    usage: CompletionUsage


ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorBody, "description": "invalid request; `error.param` names the field"},
    401: {"model": ErrorBody, "description": "missing or wrong bearer token"},
    403: {"model": ErrorBody, "description": "the gateway does not let this caller in"},
    409: {"model": ErrorBody, "description": "the session is busy or cannot be used here"},
    500: {"model": ErrorBody, "description": "the turn failed; `error.code` is its exit reason"},
}
