"""A scripted fake LLM server for tests and benchmarks: a real HTTP server on
127.0.0.1 that speaks the OpenAI chat-completions and Anthropic messages wire
formats (JSON and SSE streaming), answers each model call with the next queued
`Reply` or `Fault` (or a handler function's choice, or a default reply), records
every request as a `RecordedRequest`, and injects realistic failures (error
statuses, timeouts, cut streams, malformed JSON, context overflow) so the real
SDK clients can be exercised end to end without mocking the model.
"""

from herald.testing.fake_llm.loader import ScriptError, load_script, parse_script
from herald.testing.fake_llm.recording import RecordedRequest
from herald.testing.fake_llm.script import (
    DEFAULT_TEXT,
    AudioScript,
    FakeUsage,
    Fault,
    Reply,
    ToolCallSpec,
)
from herald.testing.fake_llm.server import DEFAULT_MODELS, FakeLLMServer, RequestHandlerFn

__all__ = [
    "DEFAULT_MODELS",
    "DEFAULT_TEXT",
    "AudioScript",
    "FakeLLMServer",
    "FakeUsage",
    "Fault",
    "RecordedRequest",
    "Reply",
    "RequestHandlerFn",
    "ScriptError",
    "ToolCallSpec",
    "load_script",
    "parse_script",
]
