"""What only the lean transports promise (the shared contract is every other test
in this directory, run on each implementation): no SDK or httpx import on the
wire path, kept-alive connections, the `model.transport` switch, SSE parsing."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest

from herald.config.schema import HeraldConfig
from herald.providers.anthropic_messages import AnthropicMessagesTransport
from herald.providers.base import CallSettings
from herald.providers.lean import LeanAnthropicMessagesTransport, LeanOpenAIChatTransport
from herald.providers.lean.wire import iter_events
from herald.providers.openai_chat import OpenAIChatTransport
from herald.providers.selection import Endpoint, ProviderConfigError, create_transport
from herald.testing.fake_llm import Reply

MESSAGES = [{"role": "user", "content": "Say hello."}]
SETTINGS = CallSettings(model="fake-model", max_tokens=64)
OPENAI = Endpoint("openai", "chat_completions", "m", "http://127.0.0.1:1/v1", "OPENAI_API_KEY")
ANTHROPIC = Endpoint("anthropic", "anthropic_messages", "m", "http://127.0.0.1:1", None)


def lean_transport(server, api: str):
    if api == "openai":
        return LeanOpenAIChatTransport(
            provider="openai", base_url=server.openai_base_url, api_key="k", timeout=5
        )
    return LeanAnthropicMessagesTransport(
        provider="anthropic", base_url=server.anthropic_base_url, api_key="k", timeout=5
    )


def test_lean_is_the_default_and_sdk_is_one_switch_away():
    assert HeraldConfig().model.transport == "lean"
    assert type(create_transport(OPENAI, "k", timeout=3)) is LeanOpenAIChatTransport
    assert type(create_transport(ANTHROPIC, "k", timeout=3)) is LeanAnthropicMessagesTransport
    assert type(create_transport(OPENAI, "k", timeout=3, transport="sdk")) is OpenAIChatTransport
    sdk = create_transport(ANTHROPIC, "k", timeout=3, transport="sdk")
    assert type(sdk) is AnthropicMessagesTransport


def test_an_unknown_transport_is_a_clear_error():
    with pytest.raises(ProviderConfigError, match=r"model\.transport"):
        create_transport(OPENAI, "k", timeout=3, transport="curl")
    with pytest.raises(ValueError, match="transport"):
        HeraldConfig.model_validate({"model": {"transport": "curl"}})


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_a_streamed_call_imports_no_sdk_and_no_httpx(server, api):
    server.enqueue(Reply.tool_call("todo", {"todos": []}))
    base = server.openai_base_url if api == "openai" else server.anthropic_base_url
    mode = "chat_completions" if api == "openai" else "anthropic_messages"
    code = (
        "import sys\n"
        "from herald.providers.base import CallSettings\n"
        "from herald.providers.selection import Endpoint, create_transport\n"
        f"ep = Endpoint({api!r}, {mode!r}, 'm', {base!r}, None)\n"
        "t = create_transport(ep, 'k', timeout=10)\n"
        "r = t.call(t.build_request([{'role': 'user', 'content': 'hi'}], None, "
        "CallSettings(model='m')), stream=True)\n"
        "print(r.tool_calls[0].name)\n"
        "print(sorted(m for m in ('openai', 'anthropic', 'httpx', 'httpx2', 'httpcore2') "
        "if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout.splitlines() == ["todo", "[]"], out.stderr


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "plain"])
@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_calls_reuse_one_kept_alive_connection(server, api, stream):
    transport = lean_transport(server, api)
    server.enqueue(Reply.text("one"), Reply.text("two"), Reply.text("three"))
    for expected in ("one", "two", "three"):
        reply = transport.call(transport.build_request(MESSAGES, None, SETTINGS), stream=stream)
        assert reply.text == expected
    assert len({r.connection_id for r in server.model_requests()}) == 1


def test_transports_to_one_origin_share_the_kept_alive_connections(server):
    """A gateway holds an agent (a transport) per chat: sockets must follow the calls in
    flight, not the agents alive, and closing one agent must not cut the others'."""
    transports = [lean_transport(server, "openai") for _ in range(5)]
    for number, transport in enumerate(transports):
        server.enqueue(Reply.text(f"reply {number}"))
        reply = transport.call(transport.build_request(MESSAGES, None, SETTINGS))
        assert reply.text == f"reply {number}"
    transports[0].close()
    server.enqueue(Reply.text("after a close"))
    assert transports[1].call(transports[1].build_request(MESSAGES, None, SETTINGS)).text
    assert len({r.connection_id for r in server.model_requests()}) == 1


def cut_idle_connections(server) -> None:
    """What a server does to an idle keep-alive connection it times out."""
    with server._lock:
        connections = list(server._connections)
    for connection in connections:
        connection.shutdown(socket.SHUT_RDWR)


def test_a_connection_the_server_closed_is_replaced(server):
    transport = lean_transport(server, "openai")
    server.enqueue(Reply.text("one"), Reply.text("two"))
    assert transport.call(transport.build_request(MESSAGES, None, SETTINGS)).text == "one"
    cut_idle_connections(server)
    assert transport.call(transport.build_request(MESSAGES, None, SETTINGS)).text == "two"
    first, second = server.model_requests()
    assert first.connection_id != second.connection_id


def test_server_sent_events_parsing():
    lines = [
        ": keep-alive",
        "event: message_start",
        'data: {"a":',
        "data: 1}",
        "",
        "",
        "id: 7",
        "data:no-space",
        "",
        "data: last without a blank line",
    ]
    events = [(e.event, e.data) for e in iter_events(iter(lines))]
    assert events == [
        ("message_start", '{"a":\n1}'),
        (None, "no-space"),
        (None, "last without a blank line"),
    ]


def test_a_redirect_is_not_followed_and_says_what_to_set():
    import http.server
    import threading

    from herald.providers.base import ProviderError

    class Redirecting(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers["content-length"]))
            self.send_response(308)
            self.send_header("location", "https://api.example.test/v1/chat/completions")
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    httpd = http.server.HTTPServer(("127.0.0.1", 0), Redirecting)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        transport = LeanOpenAIChatTransport(
            provider="custom", base_url=f"http://127.0.0.1:{httpd.server_port}/v1", api_key=None
        )
        with pytest.raises(ProviderError) as info:
            transport.call(transport.build_request(MESSAGES, None, SETTINGS))
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert info.value.status == 308
    assert "redirects to https://api.example.test/v1/chat/completions" in info.value.message
    assert "model.base_url" in info.value.message
