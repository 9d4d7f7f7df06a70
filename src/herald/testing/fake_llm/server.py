"""`FakeLLMServer`: the scripted model server's state and lifecycle."""

from __future__ import annotations

import itertools
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from types import TracebackType

from herald.testing.fake_llm.http_handler import FakeLLMRequestHandler
from herald.testing.fake_llm.recording import RecordedRequest
from herald.testing.fake_llm.script import DEFAULT_TEXT, Action, AudioScript, Fault, Reply
from herald.testing.stoppable_server import StoppableHTTPServer

RequestHandlerFn = Callable[[RecordedRequest], Action | None]

DEFAULT_MODELS = ("fake-model", "fake-model-mini")

_SHUTDOWN_GRACE_SECONDS = 0.5
_NOT_MODEL_CALLS = ("models", "audio")


class FakeHTTPServer(StoppableHTTPServer["FakeLLMServer"]):
    """Threaded HTTP server whose handlers reach back to their `FakeLLMServer`."""

    def __init__(self, address: tuple[str, int], owner: FakeLLMServer) -> None:
        super().__init__(address, FakeLLMRequestHandler, owner)


class FakeLLMServer:
    """A real HTTP server on loopback that answers like an LLM provider, from a script.

    Model calls take the next queued `Reply`/`Fault` (after a handler function,
    if one is set, declines by returning None); an empty queue answers with
    ``default_reply``.
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        default_reply: Action | None = None,
        models: Iterable[str] = DEFAULT_MODELS,
    ) -> None:
        self.host = host
        self._requested_port = port
        self.default_reply: Action = default_reply or Reply.text(DEFAULT_TEXT)
        self.models = list(models)
        self.stop_event = threading.Event()
        self.audio = AudioScript()  # what /v1/audio/transcriptions and /speech answer
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)
        self._queue: deque[Action] = deque()
        self._handler: RequestHandlerFn | None = None
        self._records: list[RecordedRequest] = []
        self._connections: dict[socket.socket, threading.Thread] = {}
        self._connection_ids = itertools.count(1)
        self._httpd: FakeHTTPServer | None = None
        self._serve_thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------

    def start(self) -> FakeLLMServer:
        if self._httpd is not None:
            raise RuntimeError("FakeLLMServer is already running")
        self.stop_event.clear()
        httpd = FakeHTTPServer((self.host, self._requested_port), self)
        self._httpd = httpd
        self._serve_thread = httpd.serve_in_thread(f"fake-llm:{httpd.server_address[1]}")
        return self

    def stop(self) -> None:
        """Stop serving; stalled requests and idle keep-alive connections are cut."""
        httpd, thread = self._httpd, self._serve_thread
        if httpd is None or thread is None:
            return
        self.stop_event.set()
        httpd.stop_serving(thread, _SHUTDOWN_GRACE_SECONDS)
        with self._lock:
            connections = dict(self._connections)
        for connection in connections:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        deadline = time.monotonic() + _SHUTDOWN_GRACE_SECONDS
        for worker in connections.values():
            worker.join(max(0.0, deadline - time.monotonic()))
        self._httpd = self._serve_thread = None

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        return self._httpd is not None

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("FakeLLMServer is not running; call start() first")
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def openai_base_url(self) -> str:
        return f"{self.url}/v1"

    @property
    def anthropic_base_url(self) -> str:
        return self.url

    # -- scripting ---------------------------------------------------------------

    def enqueue(self, *items: Action | Iterable[Action]) -> None:
        """Append replies/faults to the script (lists and tuples are flattened)."""
        flat: list[object] = []
        for item in items:
            flat.extend(item if isinstance(item, list | tuple) else [item])
        for item in flat:
            if not isinstance(item, Reply | Fault):
                raise TypeError(f"enqueue takes Reply or Fault items, got {type(item).__name__}")
        with self._lock:
            self._queue.extend(flat)  # type: ignore[arg-type]

    def set_handler(self, fn: RequestHandlerFn | None) -> None:
        """Answer model calls with ``fn(request)``; a None result falls back to the queue."""
        with self._lock:
            self._handler = fn

    @property
    def pending(self) -> int:
        """How many queued items have not been consumed yet."""
        with self._lock:
            return len(self._queue)

    def reset(self) -> None:
        """Clear the queue, the handler and the recorded requests."""
        with self._lock:
            self._queue.clear()
            self._handler = None
            self._records.clear()

    def forget_requests(self) -> None:
        """Drop the recorded requests only (the queue and handler stay): a long benchmark
        calls it now and then so the server's own memory stays bounded."""
        with self._lock:
            self._records.clear()

    # -- recording ---------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every recorded request (model calls and /v1/models), oldest first."""
        with self._lock:
            return list(self._records)

    def model_requests(self) -> list[RecordedRequest]:
        """Only chat-completions and messages calls."""
        with self._lock:
            return [record for record in self._records if record.api not in _NOT_MODEL_CALLS]

    def audio_requests(self) -> list[RecordedRequest]:
        """Only /v1/audio/transcriptions and /v1/audio/speech calls."""
        with self._lock:
            return [record for record in self._records if record.api == "audio"]

    def wait_for_requests(self, n: int, timeout: float = 5.0) -> bool:
        """Block until at least ``n`` model requests arrived; False on timeout."""
        with self._arrived:
            return self._arrived.wait_for(
                lambda: sum(record.api not in _NOT_MODEL_CALLS for record in self._records) >= n,
                timeout,
            )

    # -- called from handler threads ---------------------------------------------

    def record(self, request: RecordedRequest) -> None:
        with self._arrived:
            self._records.append(request)
            self._arrived.notify_all()

    def next_action(self, request: RecordedRequest) -> Action:
        """What answers this model call: handler, else queue, else the default."""
        with self._lock:
            handler = self._handler
        if handler is not None:
            chosen = handler(request)
            if chosen is not None and not isinstance(chosen, Reply | Fault):
                raise TypeError(
                    f"handler returned {type(chosen).__name__}; expected Reply, Fault or None"
                )
            if chosen is not None and _applies(chosen, request):
                return chosen
        with self._lock:
            for index, item in enumerate(self._queue):
                if _applies(item, request):
                    del self._queue[index]
                    return item
            return self.default_reply

    def model_ids(self) -> list[str]:
        return list(self.models)

    def track_connection(self, connection: socket.socket) -> int:
        """Register a handler's socket so stop() can cut it; returns its connection id."""
        with self._lock:
            self._connections[connection] = threading.current_thread()
            return next(self._connection_ids)

    def untrack_connection(self, connection: socket.socket) -> None:
        with self._lock:
            self._connections.pop(connection, None)

    @property
    def open_connections(self) -> int:
        """Client connections open now (kept-alive idle ones included)."""
        with self._lock:
            return len(self._connections)


def _applies(action: Action, request: RecordedRequest) -> bool:
    """A refuse_stream fault only ever answers a streaming request."""
    return not (isinstance(action, Fault) and action.kind == "refuse_stream" and not request.stream)
