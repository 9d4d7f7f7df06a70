"""HTTP plumbing shared by the SDK transports: cancellable calls.

A model call runs in the caller's thread. To abort it from outside (the user
pressed Ctrl-C, a new message arrived) we must wake a thread that may be
blocked in ``recv()`` on a server that sends nothing. Closing a socket from
another thread does not wake a blocked reader on Linux; ``shutdown()`` does.

So the httpx2 client we hand to the SDKs uses a network backend that wraps
every stream it opens; each stream registers itself with the *call scope* of
the thread that reads or writes it (keep-alive connections are re-registered
by whichever call uses them next). A watcher thread per call waits for the
cancel event and shuts those sockets down, which makes the SDK raise promptly;
the transport then turns that into `CallCancelled`.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Protocol

from herald.providers.base import CallCancelled, ProviderError

if TYPE_CHECKING:
    import httpx2

log = logging.getLogger(__name__)

# How often the watcher looks at the cancel event; bounds cancel latency.
WATCH_INTERVAL = 0.05

_local = threading.local()


class _Abortable(Protocol):
    def abort(self) -> None: ...


class CallScope:
    """Everything one in-flight call holds open, so it can be aborted at once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._streams: list[_Abortable] = []
        self._closers: list[Callable[[], None]] = []
        self.cancelled = False
        self.timed_out = False  # aborted because the whole-call deadline passed

    def register_stream(self, stream: _Abortable) -> None:
        with self._lock:
            if stream not in self._streams:
                self._streams.append(stream)
            aborted = self.cancelled
        if aborted:
            stream.abort()

    def add_closer(self, closer: Callable[[], None]) -> None:
        """A fallback used when no socket was seen (e.g. a proxied connection)."""
        with self._lock:
            self._closers.append(closer)

    def abort(self) -> None:
        with self._lock:
            self.cancelled = True
            streams = list(self._streams)
            closers = list(self._closers)
        for stream in streams:
            stream.abort()
        if not streams:
            for closer in closers:
                try:
                    closer()
                except Exception:  # closing a half-read response may raise anything
                    log.debug("closer failed during cancel", exc_info=True)


def current_scope() -> CallScope | None:
    return getattr(_local, "scope", None)


@contextmanager
def call_scope(
    cancel: threading.Event | None, *, timeout: float | None = None
) -> Iterator[CallScope]:
    """Run one call under a scope that `cancel` can abort; raises `CallCancelled`
    (chained to whatever the aborted SDK raised) when the event fired.

    `timeout` bounds the whole call (connect, first byte and every byte after):
    the SDKs' own timeouts bound each read, so a server that trickles SSE
    keep-alive comments or whitespace would hold a call forever. When it passes,
    the scope is aborted like a cancel and a ``kind="timeout"`` `ProviderError`
    naming ``model.timeout`` is raised."""
    if cancel is not None and cancel.is_set():
        raise CallCancelled("cancelled before the request was sent")
    scope = CallScope()
    previous = current_scope()
    _local.scope = scope
    done = threading.Event()
    watcher: threading.Thread | None = None
    deadline = time.monotonic() + timeout if timeout is not None else None
    if cancel is not None or deadline is not None:
        never = threading.Event()

        def watch() -> None:
            while not done.is_set():
                if (cancel or never).wait(WATCH_INTERVAL):
                    if not done.is_set():
                        scope.abort()
                    return
                if deadline is not None and time.monotonic() >= deadline and not done.is_set():
                    scope.timed_out = True
                    scope.abort()
                    return

        watcher = threading.Thread(target=watch, name="herald-call-watch", daemon=True)
        watcher.start()
    try:
        yield scope
    except CallCancelled:
        if scope.timed_out:
            raise whole_call_timeout(timeout) from None
        raise
    except Exception as exc:
        if scope.timed_out:
            raise whole_call_timeout(timeout) from exc
        if scope.cancelled or (cancel is not None and cancel.is_set()):
            raise CallCancelled("the model call was cancelled") from exc
        raise
    finally:
        done.set()
        _local.scope = previous
    if scope.timed_out:
        raise whole_call_timeout(timeout)
    if scope.cancelled:
        raise CallCancelled("the model call was cancelled")


def whole_call_timeout(timeout: float | None) -> ProviderError:
    return ProviderError(
        f"the model call did not finish within model.timeout ({timeout:g}s); raise "
        "model.timeout in config.yaml if this model is slow to answer",
        kind="timeout",
    )


def _network_classes() -> tuple[type, type]:
    import httpcore2

    return httpcore2.NetworkBackend, httpcore2.NetworkStream


def _make_tracked_classes() -> tuple[type, type]:
    backend_base, stream_base = _network_classes()

    class TrackedStream(stream_base):  # type: ignore[misc, valid-type]
        def __init__(self, inner: Any) -> None:
            self._inner = inner
            self._scope: CallScope | None = None

        def _track(self) -> None:
            scope = current_scope()
            if scope is not None and scope is not self._scope:
                self._scope = scope
                scope.register_stream(self)

        def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
            self._track()
            return self._inner.read(max_bytes, timeout)

        def write(self, buffer: bytes, timeout: float | None = None) -> None:
            self._track()
            self._inner.write(buffer, timeout)

        def close(self) -> None:
            self._inner.close()

        def start_tls(
            self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None
        ) -> Any:
            return TrackedStream(self._inner.start_tls(ssl_context, server_hostname, timeout))

        def get_extra_info(self, info: str) -> Any:
            return self._inner.get_extra_info(info)

        def abort(self) -> None:
            sock = self._inner.get_extra_info("socket")
            if sock is None:
                return
            try:
                # The plain-socket method: SSLSocket.shutdown would also drop its
                # SSL object under the reading thread's feet.
                socket.socket.shutdown(sock, socket.SHUT_RDWR)
            except OSError:
                pass  # already closed

    class TrackingBackend(backend_base):  # type: ignore[misc, valid-type]
        def __init__(self, inner: Any) -> None:
            self._inner = inner

        def connect_tcp(
            self,
            host: str,
            port: int,
            timeout: float | None = None,
            local_address: str | None = None,
            socket_options: Iterable[Any] | None = None,
        ) -> Any:
            stream = TrackedStream(
                self._inner.connect_tcp(host, port, timeout, local_address, socket_options)
            )
            stream._track()
            return stream

        def connect_unix_socket(
            self,
            path: str,
            timeout: float | None = None,
            socket_options: Iterable[Any] | None = None,
        ) -> Any:
            stream = TrackedStream(self._inner.connect_unix_socket(path, timeout, socket_options))
            stream._track()
            return stream

        def sleep(self, seconds: float) -> None:
            self._inner.sleep(seconds)

    return TrackedStream, TrackingBackend


_tracked: tuple[type, type] | None = None


def _tracked_classes() -> tuple[type, type]:
    global _tracked
    if _tracked is None:
        _tracked = _make_tracked_classes()
    return _tracked


def _instrument(transport: Any) -> bool:
    """Wrap the network backend of one httpx2 transport's connection pool (direct or
    proxy) so its streams join call scopes. False if the internals are not there."""
    pool = getattr(transport, "_pool", None)
    inner_backend = getattr(pool, "_network_backend", None)
    if inner_backend is None:
        return False
    _, backend_cls = _tracked_classes()
    if not isinstance(inner_backend, backend_cls):
        pool._network_backend = backend_cls(inner_backend)  # type: ignore[union-attr]
    return True


def build_http_client(timeout: float) -> httpx2.Client:
    """An httpx2 client for the SDKs whose connections a `CallScope` can abort.

    `timeout` bounds each network wait (connect, each read of a stream), as in
    the SDKs; connecting gets at most 15 s of it. Proxies from the environment
    are honoured as usual, and their connections are instrumented too.
    """
    import httpx2

    client = httpx2.Client(
        timeout=httpx2.Timeout(timeout, connect=min(timeout, 15.0)),
        follow_redirects=True,
    )
    transports = [getattr(client, "_transport", None)]
    transports += list((getattr(client, "_mounts", None) or {}).values())
    if not all(_instrument(t) for t in transports if t is not None):
        # Cancellation still works for streams (their responses get closed), but a
        # call stalled before any byte arrives then waits for its timeout.
        log.warning("httpx2 internals changed: cancelling a stalled call may be slow")
    return client


def split_known_params(func: Callable[..., Any], request: dict[str, Any]) -> dict[str, Any]:
    """Keyword arguments for an SDK method: the keys it declares go as-is, the rest
    (e.g. a provider-specific field) ride in ``extra_body`` so nothing is dropped."""
    import inspect

    params = inspect.signature(func).parameters
    known: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for key, value in request.items():
        if key in params and key not in {"extra_body", "extra_headers", "extra_query", "timeout"}:
            known[key] = value
        else:
            extra[key] = value
    if extra:
        known["extra_body"] = extra
    return known
