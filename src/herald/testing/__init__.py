"""Test support shared by tests and benchmarks: the scripted fake LLM server
(`FakeLLMServer`, with `Reply`/`Fault` scripts and `RecordedRequest` records)
that lets the real SDK clients talk over real HTTP instead of mocking the model.
"""

from herald.testing.fake_llm import (
    FakeLLMServer,
    FakeUsage,
    Fault,
    RecordedRequest,
    Reply,
    ToolCallSpec,
    load_script,
)

__all__ = [
    "FakeLLMServer",
    "FakeUsage",
    "Fault",
    "RecordedRequest",
    "Reply",
    "ToolCallSpec",
    "load_script",
]
