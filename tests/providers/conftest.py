"""Fixtures for the provider tests: one fake LLM server per module (reset before
every test) and transports pointed at it with short timeouts.

Every test that makes its transport with `make_transport` runs on each
implementation: the lean transport on its stdlib client (the default), the lean
transport on httpx2 (what it uses behind a proxy), and the SDK transport, so
the SDK-based tests are the contract all of them keep."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from herald.providers.anthropic_messages import AnthropicMessagesTransport
from herald.providers.base import ProviderTransport
from herald.providers.lean import LeanAnthropicMessagesTransport, LeanOpenAIChatTransport
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


TRANSPORT_CLASSES = {
    ("sdk", "openai"): OpenAIChatTransport,
    ("sdk", "anthropic"): AnthropicMessagesTransport,
    ("lean", "openai"): LeanOpenAIChatTransport,
    ("lean", "anthropic"): LeanAnthropicMessagesTransport,
}


def transport_for(
    server: FakeLLMServer,
    api: str,
    *,
    timeout: float = 5.0,
    api_key: str = "sk-test-key-1234",
    implementation: str = "sdk",
) -> ProviderTransport:
    cls = TRANSPORT_CLASSES[(implementation.split("-")[0], api)]
    if api == "openai":
        transport = cls(
            provider="openai", base_url=server.openai_base_url, api_key=api_key, timeout=timeout
        )
    else:
        transport = cls(
            provider="anthropic",
            base_url=server.anthropic_base_url,
            api_key=api_key,
            timeout=timeout,
        )
    if implementation == "lean-httpx2":
        transport.use_httpx = True  # type: ignore[attr-defined]
    return transport


@pytest.fixture(params=["lean", "lean-httpx2", "sdk"])
def implementation(request: pytest.FixtureRequest) -> str:
    """Which transport implementation a test runs on (`model.transport`)."""
    return request.param


@pytest.fixture
def make_transport(server: FakeLLMServer, implementation: str) -> Iterator[MakeTransport]:
    made: list[ProviderTransport] = []

    def make(api: str, **kw: object) -> ProviderTransport:
        transport = transport_for(server, api, implementation=implementation, **kw)  # type: ignore[arg-type]
        made.append(transport)
        return transport

    yield make
    for transport in made:
        transport.close()
