"""The per-connection HTTP handler: routes a request and writes the scripted answer."""

from __future__ import annotations

import json
import select
import socket
import threading
import time
import traceback
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler
from typing import Any, Protocol
from urllib.parse import urlsplit

from herald.testing.fake_llm.anthropic_wire import AnthropicWire
from herald.testing.fake_llm.openai_wire import OpenAIWire
from herald.testing.fake_llm.recording import ApiName, RecordedRequest
from herald.testing.fake_llm.script import DEFAULT_TEXT, Action, AudioScript, Fault, Reply
from herald.testing.fake_llm.wire_common import ErrorResponse, Frame, WireFormat, dumps
from herald.testing.stoppable_server import StoppableHTTPServer

WIRES: dict[str, WireFormat] = {"openai": OpenAIWire(), "anthropic": AnthropicWire()}

_POLL_SECONDS = 0.05
_MAX_BODY = 64 * 1024 * 1024


def route(method: str, path: str) -> ApiName | None:
    """Which API a request path belongs to (``/v1`` prefix optional)."""
    bare = path.removeprefix("/v1")
    if method == "POST" and bare == "/chat/completions":
        return "openai"
    if method == "POST" and bare == "/messages":
        return "anthropic"
    if method == "GET" and (bare == "/models" or bare.startswith("/models/")):
        return "models"
    if method == "POST" and bare in ("/audio/transcriptions", "/audio/speech"):
        return "audio"
    return None


class ScriptedModel(Protocol):
    """What a handler uses of its `FakeLLMServer` (the server's owner)."""

    stop_event: threading.Event
    audio: AudioScript

    def record(self, request: RecordedRequest) -> None: ...

    def next_action(self, request: RecordedRequest) -> Action: ...

    def model_ids(self) -> list[str]: ...

    def track_connection(self, connection: socket.socket) -> int: ...

    def untrack_connection(self, connection: socket.socket) -> None: ...


class FakeLLMRequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-llm/1.0"
    sys_version = ""
    server: StoppableHTTPServer[ScriptedModel]

    def setup(self) -> None:
        super().setup()
        # Headers and body go out as separate writes; without NODELAY, Nagle plus the
        # client's delayed ACK adds ~40 ms to every response.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.connection_id = self.server.owner.track_connection(self.connection)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.owner.untrack_connection(self.connection)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: tests read ``server.requests`` instead of an access log."""

    def do_GET(self) -> None:
        self._guarded_dispatch()

    def do_POST(self) -> None:
        self._guarded_dispatch()

    def _guarded_dispatch(self) -> None:
        try:
            self._dispatch()
        except (ConnectionError, TimeoutError):
            # The client hung up (e.g. its own timeout fired); nothing to answer.
            self.close_connection = True

    # -- routing ---------------------------------------------------------------

    def _dispatch(self) -> None:
        raw = self._read_body()
        if raw is None:
            self._send_error(WIRES["openai"].bad_request("Could not read the request body."))
            self.close_connection = True
            return
        split = urlsplit(self.path)
        path = split.path.rstrip("/") or "/"
        api = route(self.command, path)
        if api is None:
            message = f"Unknown request URL: {self.command} {path}."
            self._send_error(WIRES["openai"].not_found(message))
            return
        body = RecordedRequest.parse_body(raw)
        request = RecordedRequest(
            method=self.command,
            path=path,
            headers={key.lower(): value for key, value in self.headers.items()},
            body=body,
            raw=raw,
            api=api,
            stream=bool(body and body.get("stream") is True),
            timestamp=time.time(),
            query=split.query,
            connection_id=self.connection_id,
        )
        owner = self.server.owner
        owner.record(request)
        if api == "models":
            self._answer_models(request)
            return
        if api == "audio":
            self._answer_audio(request)
            return
        wire = WIRES[api]
        if body is None:
            self._send_error(wire.bad_request("The request body is not a valid JSON object."), wire)
            return
        try:
            action = owner.next_action(request)
        except Exception as exc:
            traceback.print_exc()
            message = f"fake LLM handler raised {type(exc).__name__}: {exc}"
            error_type, code, _ = wire.status_defaults(500, request)
            self._send_error(ErrorResponse(500, wire.error_body(message, error_type, code)), wire)
            return
        self._perform(wire, request, action)

    def _answer_models(self, request: RecordedRequest) -> None:
        wire = WIRES["anthropic" if "anthropic-version" in request.headers else "openai"]
        ids = self.server.owner.model_ids()
        bare = request.path.removeprefix("/v1")
        if bare == "/models":
            self._send_json(200, wire.models(ids), wire)
            return
        model_id = bare.removeprefix("/models/")
        if model_id in ids:
            self._send_json(200, wire.model(model_id), wire)
        else:
            self._send_error(wire.not_found(f"The model `{model_id}` does not exist."), wire)

    def _answer_audio(self, request: RecordedRequest) -> None:
        """OpenAI's speech endpoints: a transcript as JSON, or audio bytes."""
        wire = WIRES["openai"]
        audio = self.server.owner.audio
        if not audio.enabled:
            self._send_error(wire.not_found(f"Unknown request URL: POST {request.path}."), wire)
        elif request.path.endswith("/transcriptions"):
            self._send_json(200, {"text": audio.transcript}, wire)
        else:
            self._send_bytes(200, audio.speech, wire, {"content-type": "audio/mpeg"})

    # -- replies and faults ----------------------------------------------------

    def _perform(self, wire: WireFormat, request: RecordedRequest, action: Action) -> None:
        if isinstance(action, Reply):
            if not self._pause(action.delay):
                self._hang_up()
            elif request.stream:
                self._send_stream(wire.stream(action, request), wire, action.chunk_delay)
            else:
                self._send_json(200, wire.completion(action, request), wire)
            return
        self._perform_fault(wire, request, action)

    def _perform_fault(self, wire: WireFormat, request: RecordedRequest, fault: Fault) -> None:
        kind = fault.kind
        if kind == "status":
            self._send_error(wire.status_error(fault, request), wire)
        elif kind == "context_overflow":
            self._send_error(wire.context_overflow(fault, request), wire)
        elif kind == "content_policy":
            self._send_error(wire.content_policy(fault, request), wire)
        elif kind == "refuse_stream":
            if request.stream:
                self._send_error(wire.refuse_stream(request), wire)
            else:
                # Only reachable through default_reply: nothing to refuse.
                self._perform(wire, request, Reply.text(DEFAULT_TEXT))
        elif kind == "timeout":
            self._pause(fault.seconds)
            self._hang_up()
        elif kind == "close_connection":
            self._hang_up()
        elif kind == "keepalive_stall":
            self._stall(wire, request, fault)
        elif kind == "drop_mid_stream":
            self._drop(wire, request, fault)
        elif kind == "malformed_json":
            if request.stream:
                self._send_stream(wire.malformed_stream(request), wire)
            else:
                self._send_bytes(200, wire.malformed_completion(request), wire)
        elif kind == "empty_choices":
            if request.stream:
                self._send_stream(wire.empty_stream(request), wire)
            else:
                self._send_json(200, wire.empty_completion(request), wire)
        else:  # pragma: no cover - Fault validates its kind
            raise ValueError(f"unhandled fault kind {kind!r}")

    def _stall(self, wire: WireFormat, request: RecordedRequest, fault: Fault) -> None:
        if request.stream:
            content_type = "text/event-stream; charset=utf-8"
            filler = b": keep-alive\n\n" if fault.filler == "comment" else b"\n"
        else:
            content_type = "application/json"
            filler = b" "
        self._start_response(
            200, wire, {"content-type": content_type, "transfer-encoding": "chunked"}
        )
        self.end_headers()
        deadline = time.monotonic() + fault.seconds
        try:
            while time.monotonic() < deadline:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(filler), filler))
                self.wfile.flush()
                if not self._pause(fault.interval):
                    break
        except OSError:
            pass  # the client gave up, as it should
        self._hang_up()

    def _drop(self, wire: WireFormat, request: RecordedRequest, fault: Fault) -> None:
        reply = fault.drop_reply()
        if request.stream:
            frames = list(wire.stream(reply, request))
            self._send_stream(
                frames[: _cut_index(frames, fault.after_chunks)], wire, reply.chunk_delay, end=False
            )
            self._hang_up()
            return
        data = dumps(wire.completion(reply, request)).encode()
        self._start_response(200, wire, {"content-type": "application/json"})
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data[: len(data) // 2])
        self._hang_up()

    # -- low-level writing -----------------------------------------------------

    def _start_response(
        self, status: int, wire: WireFormat | None, headers: dict[str, str]
    ) -> None:
        self.send_response(status)
        if wire is not None:
            self.send_header(wire.request_id_header, wire.new_request_id())
        for key, value in headers.items():
            self.send_header(key, value)

    def _send_bytes(
        self,
        status: int,
        data: bytes,
        wire: WireFormat | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        self._start_response(status, wire, {"content-type": "application/json", **(headers or {})})
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _send_json(
        self,
        status: int,
        body: dict[str, Any],
        wire: WireFormat | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        self._send_bytes(status, json.dumps(body, ensure_ascii=False).encode(), wire, headers)

    def _send_error(self, error: ErrorResponse, wire: WireFormat | None = None) -> None:
        self._send_json(error.status, error.body, wire, error.headers)

    def _send_stream(
        self,
        frames: Iterable[Frame],
        wire: WireFormat,
        chunk_delay: float = 0.0,
        *,
        end: bool = True,
    ) -> None:
        self._start_response(
            200,
            wire,
            {
                "content-type": "text/event-stream; charset=utf-8",
                "cache-control": "no-cache",
                "transfer-encoding": "chunked",
            },
        )
        self.end_headers()
        for position, frame in enumerate(frames):
            if position and chunk_delay and not self._pause(chunk_delay):
                self._hang_up()
                return
            self.wfile.write(b"%x\r\n%s\r\n" % (len(frame.data), frame.data))
        if end:
            self.wfile.write(b"0\r\n\r\n")

    def _hang_up(self) -> None:
        """Close the connection now, without (the rest of) a response."""
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _pause(self, seconds: float) -> bool:
        """Wait ``seconds``; False if the server is stopping or the client left first."""
        deadline = time.monotonic() + seconds
        stop_event = self.server.owner.stop_event
        while (remaining := deadline - time.monotonic()) > 0:
            if stop_event.wait(min(remaining, _POLL_SECONDS)) or self._client_gone():
                return False
        return not stop_event.is_set()

    def _client_gone(self) -> bool:
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            if not readable:
                return False
            return self.connection.recv(1, socket.MSG_PEEK) == b""
        except (OSError, ValueError):
            return True

    def _read_body(self) -> bytes | None:
        """The request body (Content-Length or chunked); None if it cannot be read."""
        if "chunked" in self.headers.get("transfer-encoding", "").lower():
            return self._read_chunked()
        try:
            length = int(self.headers.get("content-length") or 0)
        except ValueError:
            return None
        if length < 0 or length > _MAX_BODY:
            return None
        data = self.rfile.read(length) if length else b""
        return data if len(data) == length else None

    def _read_chunked(self) -> bytes | None:
        parts: list[bytes] = []
        total = 0
        while True:
            line = self.rfile.readline(1024)
            try:
                size = int(line.split(b";")[0].strip(), 16)
            except ValueError:
                return None
            if size == 0:
                while self.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                    pass
                return b"".join(parts)
            total += size
            if total > _MAX_BODY:
                return None
            parts.append(self.rfile.read(size))
            self.rfile.readline(1024)


def _cut_index(frames: list[Frame], after_deltas: int) -> int:
    """How many frames to send before cutting: through the Nth content delta,
    never including the final terminator frame."""
    seen = 0
    limit = len(frames) - 1
    for index, frame in enumerate(frames[:limit]):
        if frame.is_delta:
            if seen == after_deltas:
                return index
            seen += 1
    return limit
