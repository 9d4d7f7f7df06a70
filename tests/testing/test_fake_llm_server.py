"""Server behaviour: scripting, recording, handlers, keep-alive, shutdown."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import textwrap
import threading
from concurrent.futures import ThreadPoolExecutor

import anthropic
import httpx2
import openai
import pytest

from herald.testing.fake_llm import (
    DEFAULT_TEXT,
    FakeLLMServer,
    Fault,
    RecordedRequest,
    Reply,
    ToolCallSpec,
)

TOOLS = [
    {
        "type": "function",
        "function": {"name": "todo", "parameters": {"type": "object", "properties": {}}},
    }
]


def ask(client: openai.OpenAI, text: str = "hi", *, stream: bool = False) -> str:
    messages = [{"role": "user", "content": text}]
    if stream:
        chunks = client.chat.completions.create(model="m", messages=messages, stream=True)  # type: ignore[arg-type]
        return "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    result = client.chat.completions.create(model="m", messages=messages)  # type: ignore[arg-type]
    return result.choices[0].message.content or ""


def test_reply_constructors_and_instance_fields() -> None:
    reply = Reply.text("hello", chunk_size=3)
    calls = Reply.tool_calls([{"name": "todo", "arguments": {"a": 1}}], text="pre")
    single = Reply.tool_call("read", '{"x"', id="call_1")

    assert (reply.text, reply.tool_calls, reply.chunk_size) == ("hello", (), 3)
    assert calls.text == "pre"
    assert calls.tool_calls == (ToolCallSpec("todo", {"a": 1}),)
    assert single.tool_calls == (ToolCallSpec("read", '{"x"', "call_1"),)
    assert single.text is None
    assert reply.replace(text="bye") == Reply.text("bye", chunk_size=3)
    with pytest.raises(ValueError):
        Reply.text("x", chunk_size=0)
    with pytest.raises(ValueError):
        Fault.status(200)


def test_urls_and_ports() -> None:
    with FakeLLMServer() as first, FakeLLMServer() as second:
        assert first.port != second.port
        assert first.url == f"http://127.0.0.1:{first.port}"
        assert first.openai_base_url == first.url + "/v1"
        assert first.anthropic_base_url == first.url
    not_started = FakeLLMServer()
    with pytest.raises(RuntimeError):
        _ = not_started.url


def test_queue_is_fifo_then_default(server: FakeLLMServer, oai: openai.OpenAI) -> None:
    server.enqueue(Reply.text("one"), [Reply.text("two")])

    assert [ask(oai), ask(oai, stream=True), ask(oai)] == ["one", "two", DEFAULT_TEXT]
    server.default_reply = Reply.text("custom default")
    assert ask(oai) == "custom default"
    assert server.pending == 0
    with pytest.raises(TypeError):
        server.enqueue("not a reply")  # type: ignore[arg-type]


def test_requests_are_recorded(
    server: FakeLLMServer, oai: openai.OpenAI, claude: anthropic.Anthropic
) -> None:
    oai.chat.completions.create(
        model="gpt-test",
        messages=[
            {"role": "system", "content": "You are Herald."},
            {"role": "user", "content": "hi"},
        ],
        tools=TOOLS,  # type: ignore[arg-type]
    )
    claude.messages.create(
        model="claude-test",
        max_tokens=32,
        system=[{"type": "text", "text": "Layer one."}, {"type": "text", "text": "Layer two."}],
        messages=[{"role": "user", "content": "hey"}],
        stream=True,
    ).close()
    oai.models.list()

    first, second, third = server.requests
    assert (first.api, first.method, first.path, first.stream) == (
        "openai",
        "POST",
        "/v1/chat/completions",
        False,
    )
    assert first.headers["authorization"] == "Bearer test"
    assert first.headers["content-type"] == "application/json"
    assert json.loads(first.raw) == first.body
    assert first.model == "gpt-test"
    assert first.system == "You are Herald."
    assert first.messages[-1] == {"role": "user", "content": "hi"}
    assert first.tools == TOOLS
    assert (second.api, second.path, second.stream) == ("anthropic", "/v1/messages", True)
    # Anthropic SDK 2.x sends the key as a bearer token; older ones used x-api-key.
    assert "test" in (second.headers.get("x-api-key"), second.headers.get("authorization", "")[7:])
    assert "anthropic-version" in second.headers
    assert second.system == "Layer one.\nLayer two."
    assert second.tools is None
    assert second.last_user_text == "hey"
    assert third.api == "models"
    assert server.model_requests() == [first, second]
    assert first.timestamp <= second.timestamp <= third.timestamp


def test_handler_function_answers_and_can_defer_to_the_queue(
    server: FakeLLMServer, oai: openai.OpenAI
) -> None:
    def handler(request: RecordedRequest) -> Reply | Fault | None:
        text = request.last_user_text or ""
        if text.startswith("echo "):
            return Reply.text(text.removeprefix("echo "))
        if text == "fail":
            return Fault.status(503)
        return None

    server.set_handler(handler)
    server.enqueue(Reply.text("from the queue"))

    assert ask(oai, "echo ping") == "ping"
    assert ask(oai, "something else") == "from the queue"
    with pytest.raises(openai.InternalServerError):
        ask(oai, "fail")
    assert ask(oai, "echo stream", stream=True) == "stream"


def test_handler_exception_becomes_a_500_naming_it(
    server: FakeLLMServer, oai: openai.OpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(request: RecordedRequest) -> Reply:
        raise KeyError("missing-fixture-data")

    server.set_handler(broken)

    with pytest.raises(openai.InternalServerError) as caught:
        ask(oai)

    assert "missing-fixture-data" in caught.value.message
    assert "KeyError" in capsys.readouterr().err

    server.set_handler(lambda request: "just a string")  # type: ignore[arg-type,return-value]
    with pytest.raises(openai.InternalServerError) as wrong_type:
        ask(oai)
    assert "expected Reply, Fault or None" in wrong_type.value.message


def test_reset_clears_queue_handler_and_records(server: FakeLLMServer, oai: openai.OpenAI) -> None:
    server.enqueue(Reply.text("queued"))
    server.set_handler(lambda request: Reply.text("handled"))
    ask(oai)

    server.reset()

    assert server.requests == []
    assert server.pending == 0
    assert ask(oai) == DEFAULT_TEXT


def test_wait_for_requests(server: FakeLLMServer, oai: openai.OpenAI) -> None:
    oai.models.list()  # not a model request: does not count
    assert server.wait_for_requests(1, timeout=0.05) is False

    worker = threading.Thread(target=ask, args=(oai,))
    worker.start()
    arrived = server.wait_for_requests(1, timeout=5.0)
    worker.join(5.0)

    assert arrived is True
    assert len(server.model_requests()) == 1


def test_concurrent_calls_each_get_their_own_answer(
    server: FakeLLMServer, oai: openai.OpenAI
) -> None:
    server.set_handler(lambda request: Reply.text(f"answer to {request.last_user_text}"))

    with ThreadPoolExecutor(max_workers=8) as pool:
        answers = list(pool.map(lambda i: ask(oai, f"q{i}", stream=i % 2 == 0), range(16)))

    assert answers == [f"answer to q{i}" for i in range(16)]
    assert len(server.model_requests()) == 16


def test_plain_requests_reuse_one_kept_alive_connection() -> None:
    with FakeLLMServer() as server:
        client = openai.OpenAI(base_url=server.openai_base_url, api_key="test", max_retries=0)
        with client:
            for _ in range(5):
                ask(client)
            ask(client, stream=True)
            ask(client)
        ids = [request.connection_id for request in server.requests]
    assert len(set(ids[:6])) == 1  # five plain calls and the stream share a connection
    assert ids[0] > 0


def test_unknown_path_is_a_404_json_error(server: FakeLLMServer) -> None:
    response = httpx2.post(server.url + "/v1/completions", json={"prompt": "x"})

    assert response.status_code == 404
    assert "Unknown request URL" in response.json()["error"]["message"]
    assert server.requests == []


def test_invalid_json_body_is_a_400_and_recorded(server: FakeLLMServer) -> None:
    response = httpx2.post(
        server.url + "/v1/messages",
        content=b"{not json",
        headers={"content-type": "application/json"},
    )

    assert response.status_code == 400
    assert response.json()["error"]["type"] == "invalid_request_error"
    (recorded,) = server.requests
    assert (recorded.body, recorded.raw) == (None, b"{not json")


def test_stop_cuts_stalled_requests_and_idle_connections() -> None:
    server = FakeLLMServer().start()
    client = openai.OpenAI(base_url=server.openai_base_url, api_key="test", max_retries=0)
    ask(client)  # leaves an idle keep-alive connection behind
    server.enqueue(Fault.timeout(60))
    outcome: list[BaseException] = []

    def stalled_call() -> None:
        try:
            ask(client.with_options(timeout=60))
        except BaseException as exc:
            outcome.append(exc)

    worker = threading.Thread(target=stalled_call)
    worker.start()
    assert server.wait_for_requests(2)

    server.stop()
    worker.join(10)

    assert not worker.is_alive()
    assert len(outcome) == 1
    assert isinstance(outcome[0], openai.APIConnectionError)
    assert not isinstance(outcome[0], openai.APITimeoutError)
    assert not server.running
    port = int(client.base_url.port or 0)
    with pytest.raises(ConnectionRefusedError), socket.create_connection(("127.0.0.1", port)):
        pass
    client.close()


def test_server_can_restart_after_stop() -> None:
    server = FakeLLMServer()
    for _ in range(2):
        with server:
            response = httpx2.get(server.openai_base_url + "/models")
            assert response.status_code == 200


def test_no_resource_warnings_after_a_busy_session() -> None:
    script = textwrap.dedent(
        """
        import gc, warnings
        warnings.simplefilter("always", ResourceWarning)
        import openai
        from herald.testing.fake_llm import FakeLLMServer, Fault, Reply
        with FakeLLMServer() as server:
            server.enqueue(Reply.text("a"), Fault.close_connection(), Fault.drop_mid_stream(),
                           Fault.timeout(30))
            client = openai.OpenAI(base_url=server.openai_base_url, api_key="t", max_retries=0,
                                   timeout=0.3)
            for stream in (False, True, True, False):
                try:
                    result = client.chat.completions.create(
                        model="m", messages=[{"role": "user", "content": "x"}], stream=stream)
                    if stream:
                        list(result)
                except openai.APIError:
                    pass
            client.close()
        gc.collect()
        print("finished")
        """
    )
    done = subprocess.run(
        [sys.executable, "-X", "dev", "-c", script], capture_output=True, text=True, timeout=60
    )

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "finished"
    assert "ResourceWarning" not in done.stderr, done.stderr


async def test_async_clients_stream_and_keep_the_connection(server: FakeLLMServer) -> None:
    server.enqueue(Reply.text("streamed async"), Reply.text("plain async"))
    client = openai.AsyncOpenAI(base_url=server.openai_base_url, api_key="test", max_retries=0)
    messages = [{"role": "user", "content": "hi"}]

    async with client:
        stream = await client.chat.completions.create(model="m", messages=messages, stream=True)  # type: ignore[arg-type]
        streamed = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
        plain = await client.chat.completions.create(model="m", messages=messages)  # type: ignore[arg-type]

    assert (streamed, plain.choices[0].message.content) == ("streamed async", "plain async")
    # The async SDK drains the stream after [DONE], so the connection is reused.
    first, second = server.model_requests()
    assert first.connection_id == second.connection_id
