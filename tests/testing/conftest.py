"""Fixtures for the fake LLM server tests: a running server and real SDK clients.

One server and one pair of clients serve a whole test module (building SDK
clients is the slow part); each test gets the server back in its initial state.
"""

from __future__ import annotations

from collections.abc import Iterator

import anthropic
import openai
import pytest

from herald.testing.fake_llm import DEFAULT_MODELS, DEFAULT_TEXT, FakeLLMServer, Reply


@pytest.fixture(scope="module")
def module_server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as running:
        yield running


@pytest.fixture
def server(module_server: FakeLLMServer) -> Iterator[FakeLLMServer]:
    module_server.reset()
    module_server.default_reply = Reply.text(DEFAULT_TEXT)
    module_server.models = list(DEFAULT_MODELS)
    yield module_server
    module_server.reset()


@pytest.fixture(scope="module")
def module_oai(module_server: FakeLLMServer) -> Iterator[openai.OpenAI]:
    client = openai.OpenAI(
        base_url=module_server.openai_base_url, api_key="test", max_retries=0, timeout=5.0
    )
    yield client
    client.close()


@pytest.fixture(scope="module")
def module_claude(module_server: FakeLLMServer) -> Iterator[anthropic.Anthropic]:
    client = anthropic.Anthropic(
        base_url=module_server.anthropic_base_url, api_key="test", max_retries=0, timeout=5.0
    )
    yield client
    client.close()


@pytest.fixture
def oai(server: FakeLLMServer, module_oai: openai.OpenAI) -> openai.OpenAI:
    return module_oai


@pytest.fixture
def claude(server: FakeLLMServer, module_claude: anthropic.Anthropic) -> anthropic.Anthropic:
    return module_claude
