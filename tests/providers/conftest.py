"""Fixtures for the provider tests: one fake LLM server per module (reset before
every test) and transports pointed at it with short timeouts."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from herald.providers.anthropic_messages import AnthropicMessagesTransport
from herald.providers.base import ProviderTransport
from herald.providers.openai_chat import OpenAIChatTransport
from herald.testing.fake_llm import FakeLLMServer

APIS = ("openai", "anthropic")

MakeTransport = Callable[..., ProviderTransport]


@pytest.fixture(scope="module")
def module_server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as server:
        yield server


@pytest.fixture
def server(module_server: FakeLLMServer) -> FakeLLMServer:
    module_server.reset()
    return module_server


def transport_for(
    server: FakeLLMServer, api: str, *, timeout: float = 5.0, api_key: str = "sk-test-key-1234"
) -> ProviderTransport:
    if api == "openai":
        return OpenAIChatTransport(
            provider="openai", base_url=server.openai_base_url, api_key=api_key, timeout=timeout
        )
    return AnthropicMessagesTransport(
        provider="anthropic", base_url=server.anthropic_base_url, api_key=api_key, timeout=timeout
    )


@pytest.fixture
def make_transport(server: FakeLLMServer) -> Iterator[MakeTransport]:
    made: list[ProviderTransport] = []

    def make(api: str, **kw: object) -> ProviderTransport:
        transport = transport_for(server, api, **kw)  # type: ignore[arg-type]
        made.append(transport)
        return transport

    yield make
    for transport in made:
        transport.close()
