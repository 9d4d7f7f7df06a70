"""What a turn does with a model call that failed or was cut short: retried streams
are discarded on the surface, truncated/filtered answers end with named reasons and
stay marked partial, and errors that are never retried carry their classified
reason and the provider's own (redacted) words."""

from __future__ import annotations

import json
import shutil
import ssl
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from herald.engine import ExitReason, TurnCallbacks
from herald.testing.fake_llm import Fault, Reply


class Screen:
    """What a surface shows: streamed text, wiped by on_stream_discard."""

    def __init__(self) -> None:
        self.text = ""
        self.discards = 0
        self.events: list[str] = []

    def delta(self, piece: str) -> None:
        self.text += piece
        self.events.append("delta")

    def discard(self) -> None:
        self.text = ""
        self.discards += 1
        self.events.append("discard")

    def status(self, message: str) -> None:
        self.events.append(f"status:{message}")

    def callbacks(self) -> TurnCallbacks:
        return TurnCallbacks(
            on_text_delta=self.delta, on_stream_discard=self.discard, on_status=self.status
        )


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_text_streamed_by_a_failed_attempt_is_discarded_before_the_retry(make_agent, fake_llm, api):
    fake_llm.enqueue(
        Fault.drop_mid_stream(
            3, reply=Reply.text("partial0 partial1 partial2 partial3", chunk_size=9)
        ),
        Reply.text("the real answer"),
    )
    screen = Screen()
    agent = make_agent(api=api)
    result = agent.start_turn("hello", callbacks=screen.callbacks()).result(timeout=60)
    assert result.exit_reason is ExitReason.TEXT_RESPONSE
    assert screen.text == "the real answer" == result.final_text
    assert screen.discards == 1
    # The discard comes before the retry notice and before any text of the retry.
    first_discard = screen.events.index("discard")
    assert "delta" in screen.events[:first_discard]
    assert any(e.startswith("status:") for e in screen.events[first_discard:])


def test_no_discard_when_the_failed_attempt_streamed_nothing(make_agent, fake_llm):
    fake_llm.enqueue(Fault.status(500), Reply.text("fine"))
    screen = Screen()
    result = make_agent().start_turn("hi", callbacks=screen.callbacks()).result(timeout=60)
    assert result.final_text == "fine" == screen.text
    assert screen.discards == 0


def test_a_failed_attempt_that_ends_the_turn_is_discarded_too(make_agent, fake_llm):
    fake_llm.enqueue(*[Fault.drop_mid_stream(2)] * 6)
    screen = Screen()
    agent = make_agent(config={"agent": {"max_retries": 1}})
    result = agent.start_turn("hi", callbacks=screen.callbacks()).result(timeout=60)
    assert result.exit_reason is ExitReason.ALL_RETRIES_EXHAUSTED
    assert screen.text == ""


@pytest.mark.parametrize("api", ["openai", "anthropic"])
@pytest.mark.parametrize(
    ("finish", "expected", "words"),
    [
        ("length", ExitReason.OUTPUT_TRUNCATED, "cut off"),
        ("content_filter", ExitReason.CONTENT_POLICY_BLOCKED, "content filter"),
    ],
)
def test_a_cut_answer_ends_with_its_reason_and_stays_partial(
    make_agent, fake_llm, api, finish, expected, words
):
    # The fake server renders "length" as Anthropic's max_tokens and
    # "content_filter" as its refusal stop reason.
    fake_llm.enqueue(Reply.text("The first half of an ans", finish_reason=finish))
    agent = make_agent(api=api)
    result = agent.run_turn("explain")
    assert result.exit_reason is expected
    assert result.final_text == "The first half of an ans"
    assert result.partial and not result.completed
    assert result.to_dict()["partial"] is True
    assert words in result.error and "partial" in result.error
    stored = agent.store.get_messages(result.session_id)[-1]
    assert stored.role == "assistant" and stored.content == "The first half of an ans"
    assert agent.store.get_session(result.session_id).last_exit_reason == expected.value


def test_a_complete_answer_is_not_partial(make_agent, fake_llm):
    fake_llm.enqueue(Reply.text("all of it"))
    result = make_agent().run_turn("hi")
    assert result.exit_reason is ExitReason.TEXT_RESPONSE and not result.partial


@pytest.mark.parametrize(
    ("api", "fault", "expected", "detail"),
    [
        (
            "openai",
            Fault.status(401, "Incorrect API key provided: sk-test-key-1234567890abcd."),
            ExitReason.AUTH_FAILED,
            "Incorrect API key provided",
        ),
        (
            "openai",
            Fault.status(402, "Your credit balance is too low to access the API."),
            ExitReason.OUT_OF_CREDIT,
            "credit balance is too low",
        ),
        (
            "openai",
            Fault.status(404, "The model `gpt-9-ultra` does not exist or you do not have access."),
            ExitReason.MODEL_NOT_FOUND,
            "gpt-9-ultra",
        ),
        (
            "anthropic",
            Fault.status(400, "messages.0.content: field required"),
            ExitReason.INVALID_REQUEST,
            "messages.0.content: field required",
        ),
    ],
    ids=["401", "402", "404", "400"],
)
def test_errors_never_retried_end_with_their_reason_and_the_providers_words(
    make_agent, fake_llm, api, fault, expected, detail
):
    fake_llm.enqueue(fault)
    agent = make_agent(api=api)
    result = agent.run_turn("hello")
    assert result.exit_reason is expected
    assert len(fake_llm.model_requests()) == 1
    assert detail in result.error
    assert "sk-test-key-1234567890abcd" not in result.error  # redacted
    assert agent.store.get_session(result.session_id).last_exit_reason == expected.value


def test_exhausted_retries_carry_the_last_error_detail(make_agent, fake_llm):
    fake_llm.enqueue(*[Fault.status(503, "upstream replica 7 is restarting")] * 3)
    agent = make_agent(config={"agent": {"max_retries": 1}})
    result = agent.run_turn("hello")
    assert result.exit_reason is ExitReason.ALL_RETRIES_EXHAUSTED
    assert "upstream replica 7 is restarting" in result.error


def test_a_missing_local_extra_says_which_extra_to_install(make_agent, fake_llm, monkeypatch):
    from herald.providers.local import model_file

    monkeypatch.setattr(model_file, "RUNTIME_MODULE", "herald_no_such_runtime")
    agent = make_agent(config={"model": {"provider": "local", "name": "smollm2", "base_url": None}})
    result = agent.run_turn("hello")
    assert result.exit_reason is ExitReason.MISSING_EXTRA
    assert "pip install 'herald[local]'" in result.error
    assert "not found at the provider" not in result.error


class _OneShotHandler(BaseHTTPRequestHandler):
    """Answers every POST with the class's `body` as an SSE stream."""

    body = b""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *_args) -> None:
        pass


@pytest.fixture
def tiny_server():
    servers = []

    def start(body: bytes = b"", *, tls_dir=None) -> str:
        handler = type("Handler", (_OneShotHandler,), {"body": body})
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        scheme = "http"
        if tls_dir is not None:
            cert, key = tls_dir / "cert.pem", tls_dir / "key.pem"
            subprocess.run(
                [
                    "openssl",
                    "req",
                    "-x509",
                    "-newkey",
                    "rsa:2048",
                    "-nodes",
                    "-days",
                    "1",
                    "-subj",
                    "/CN=127.0.0.1",
                    "-keyout",
                    str(key),
                    "-out",
                    str(cert),
                ],
                check=True,
                capture_output=True,
            )
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(cert, key)
            server.socket = context.wrap_socket(server.socket, server_side=True)
            scheme = "https"
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"{scheme}://127.0.0.1:{server.server_address[1]}/v1"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl CLI for a cert")
def test_a_self_signed_certificate_is_a_tls_failure_not_a_connection_error(
    make_agent, tiny_server, tmp_path
):
    url = tiny_server(tls_dir=tmp_path)
    agent = make_agent(config={"model": {"provider": "custom", "base_url": url}})
    result = agent.run_turn("hello")
    assert result.exit_reason is ExitReason.TLS_FAILED
    assert "certificate" in result.error and "SSL_CERT_FILE" in result.error


def test_an_error_nothing_can_classify_ends_as_model_call_failed(make_agent, tiny_server):
    event = {"error": {"message": "the backend exploded", "type": "mystery_error"}}
    url = tiny_server(f"data: {json.dumps(event)}\n\n".encode())
    agent = make_agent(config={"model": {"provider": "custom", "base_url": url}})
    result = agent.run_turn("hello")
    assert result.exit_reason is ExitReason.MODEL_CALL_FAILED
    assert "the backend exploded" in result.error
