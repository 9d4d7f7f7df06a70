"""A small HTTP/1.1 client on the standard library, for the lean transports.

Why not httpx: importing httpx2 and httpcore2 (with their anyio backend) costs
more start-up time than the whole rest of a one-shot turn's wire path, and the
two wire formats need one POST with a JSON or SSE answer. Kept-alive
connections are reused per transport.

The contract is the SDK transports': `timeout` (``model.timeout``) bounds the
whole call, connect to last byte, not each read, so a server trickling SSE
keep-alives cannot hold a call; a cancel (the transport's call scope) shuts the
socket down, which wakes a reader blocked in ``recv()``. Proxies from the
environment are not handled here: the transports use httpx2 when one is set.
"""

from __future__ import annotations

import http.client
import os
import socket
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

from herald.providers._http import current_scope
from herald.providers.base import ProviderError

CONNECT_TIMEOUT = 15.0
PROXY_VARIABLES = ("https_proxy", "http_proxy", "all_proxy")


def proxy_configured() -> bool:
    """True when the environment names a proxy (then the httpx2 client is used)."""
    return any(os.environ.get(name) or os.environ.get(name.upper()) for name in PROXY_VARIABLES)


def whole_call_timeout(timeout: float) -> ProviderError:
    return ProviderError(
        f"the model call did not finish within model.timeout ({timeout:g}s); raise "
        "model.timeout in config.yaml if this model is slow to answer",
        kind="timeout",
    )


def tls_context() -> Any:
    """Certificate checks as httpx2 does them: the system's store (``SSL_CERT_FILE``
    and ``SSL_CERT_DIR`` honoured); on macOS and Windows through truststore."""
    import ssl

    if sys.platform in ("darwin", "win32") and not (
        os.environ.get("SSL_CERT_FILE") or os.environ.get("SSL_CERT_DIR")
    ):
        try:
            import truststore

            return truststore.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        except ImportError:
            pass
    return ssl.create_default_context()


class _SocketAborter:
    """Registered with the call scope: a cancel shuts the socket down."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock

    def abort(self) -> None:
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass  # already closed


class Deadline:
    """The end of one call; every socket wait gets only the time that is left."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.at = time.monotonic() + timeout

    def remaining(self) -> float:
        left = self.at - time.monotonic()
        if left <= 0:
            raise whole_call_timeout(self.timeout)
        return left

    def arm(self, sock: socket.socket | None) -> None:
        if sock is not None:
            sock.settimeout(self.remaining())


class Response:
    """One answer, read under the call's deadline (the attributes the error mapping
    and the event parsers use: ``status_code``, ``headers``, ``text``)."""

    def __init__(
        self, raw: http.client.HTTPResponse, conn: http.client.HTTPConnection, owner: Client
    ) -> None:
        self._raw = raw
        self._conn = conn
        self._owner = owner
        self._deadline: Deadline | None = None
        self.status_code = raw.status
        self.headers = raw.headers
        self._body: bytes | None = None
        self._closed = False

    def _arm(self) -> None:
        if self._deadline is not None:
            self._deadline.arm(self._conn.sock)

    def read(self) -> bytes:
        if self._body is None:
            self._body = self._guard(self._read_all)
        return self._body

    def _read_all(self) -> bytes:
        parts = []
        while True:
            self._arm()
            part = self._raw.read1(65536)
            if not part:
                body = b"".join(parts)
                if self._raw.length:  # the server hung up before Content-Length bytes
                    raise http.client.IncompleteRead(body, self._raw.length)
                return body
            parts.append(part)

    @property
    def text(self) -> str:
        return self.read().decode("utf-8", errors="replace")

    def iter_lines(self) -> Iterator[str]:
        while True:
            line = self._guard(self._readline)
            if not line:
                return
            yield line.decode("utf-8", errors="replace").rstrip("\r\n")

    def _readline(self) -> bytes:
        self._arm()
        return self._raw.readline()

    def _guard(self, read: Any) -> Any:
        try:
            return read()
        except TimeoutError as exc:
            if self._deadline is not None and time.monotonic() >= self._deadline.at:
                raise whole_call_timeout(self._deadline.timeout) from exc
            raise
        except http.client.HTTPException as exc:
            raise ProviderError(
                f"connection to the provider failed: {type(exc).__name__}: {exc}",
                kind="connection",
            ) from exc

    def drain(self) -> None:
        """Read what is left of a finished answer so the connection can be reused."""
        try:
            self.read()
        except (OSError, ProviderError):
            pass  # close() then drops the connection

    def close(self) -> None:
        """Hand a fully read connection back for reuse; drop any other. Once: a second
        close must not hand the same connection out twice (two calls on one socket)."""
        if self._closed:
            return
        self._closed = True
        finished = self._raw.isclosed() or self._raw.length == 0
        reusable = finished and not self._raw.will_close
        self._raw.close()
        if reusable:
            self._owner.release(self._conn)
        else:
            self._conn.close()


# Idle kept-alive connections per origin, shared by every transport of the process: a
# gateway holds one agent (one transport, or two with the auxiliary model) per chat, and
# its sockets must follow the calls in flight, not the agents alive. Beyond this many
# idle ones a returned connection is closed.
MAX_IDLE_PER_ORIGIN = 8


class _Idle:
    def __init__(self) -> None:
        self.connections: list[http.client.HTTPConnection] = []
        self.lock = threading.Lock()


_origins: dict[tuple[str, str, int | None], _Idle] = {}
_origins_lock = threading.Lock()


def _idle_for(scheme: str, host: str, port: int | None) -> _Idle:
    with _origins_lock:
        found = _origins.get((scheme, host, port))
        if found is None:
            found = _origins[(scheme, host, port)] = _Idle()
        return found


def _forget_in_child() -> None:
    """A forked child must not write on its parent's sockets: it starts with none."""
    global _origins, _origins_lock
    _origins, _origins_lock = {}, threading.Lock()


os.register_at_fork(after_in_child=_forget_in_child)


class Client:
    """Kept-alive connections to one origin (shared with every other client of the same
    origin in this process); safe to share between threads."""

    def __init__(self, base_url: str, timeout: float) -> None:
        parts = urlsplit(base_url)
        self.scheme = parts.scheme or "https"
        self.host = parts.hostname or ""
        self.port = parts.port
        self.timeout = timeout
        self._idle = _idle_for(self.scheme, self.host, self.port)

    def _connect(self, deadline: Deadline) -> http.client.HTTPConnection:
        with self._idle.lock:
            if self._idle.connections:
                return self._idle.connections.pop()
        connect_timeout = min(deadline.remaining(), CONNECT_TIMEOUT)
        if self.scheme == "https":
            return http.client.HTTPSConnection(
                self.host, self.port, timeout=connect_timeout, context=tls_context()
            )
        return http.client.HTTPConnection(self.host, self.port, timeout=connect_timeout)

    def release(self, conn: http.client.HTTPConnection) -> None:
        with self._idle.lock:
            if any(c is conn for c in self._idle.connections):
                return
            if len(self._idle.connections) < MAX_IDLE_PER_ORIGIN:
                self._idle.connections.append(conn)
                return
        conn.close()

    def post(self, path: str, body: bytes, headers: dict[str, str]) -> Response:
        """Send one POST and read the status line and headers (the body is left to
        the caller). A kept-alive connection the server already closed is retried
        once on a new one: nothing was processed."""
        deadline = Deadline(self.timeout)
        for attempt in (1, 2):
            conn = self._connect(deadline)
            reused = conn.sock is not None
            try:
                raw = self._exchange(conn, path, body, headers, deadline)
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                conn.close()
                scope = current_scope()
                if reused and attempt == 1 and not (scope is not None and scope.cancelled):
                    continue
                raise
            except BaseException:
                conn.close()
                raise
            response = Response(raw, conn, self)
            response._deadline = deadline
            return response
        raise AssertionError("unreachable")  # pragma: no cover

    def _exchange(
        self,
        conn: http.client.HTTPConnection,
        path: str,
        body: bytes,
        headers: dict[str, str],
        deadline: Deadline,
    ) -> http.client.HTTPResponse:
        if conn.sock is None:
            conn.connect()
        scope = current_scope()
        if scope is not None and conn.sock is not None:
            scope.register_stream(_SocketAborter(conn.sock))
        deadline.arm(conn.sock)
        try:
            conn.request("POST", path, body=body, headers=headers)
            deadline.arm(conn.sock)
            return conn.getresponse()
        except TimeoutError as exc:
            if time.monotonic() >= deadline.at:
                raise whole_call_timeout(deadline.timeout) from exc
            raise
        except http.client.HTTPException as exc:
            if isinstance(exc, http.client.RemoteDisconnected):
                raise
            raise ProviderError(
                f"connection to the provider failed: {type(exc).__name__}: {exc}",
                kind="connection",
            ) from exc

    def close(self) -> None:
        """This client is done. The idle connections stay for the origin's other clients
        (they are few, see MAX_IDLE_PER_ORIGIN, and a server may close them any time)."""
