"""A real TCP listener on 127.0.0.1 that records every connection reaching it, for tests
that prove a command did (or did not) get out: a `curl` to it, a reverse shell at it.

    with Listener() as target:
        ... run something that may connect to target.port ...
        assert target.connections == []

Each connection is accepted, its first bytes are kept (up to a short wait), an HTTP
200 answer is sent (so a `curl` ends at once) and the socket is closed.
"""

from __future__ import annotations

import socket
import threading
from dataclasses import dataclass, field


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (for a server a test starts)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


_ANSWER = b"HTTP/1.1 200 OK\r\nContent-Length: 8\r\nConnection: close\r\n\r\nreached\n"


@dataclass
class Listener:
    host: str = "127.0.0.1"
    connections: list[bytes] = field(default_factory=list)
    port: int = 0

    def __post_init__(self) -> None:
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind((self.host, 0))
        self._sock.listen(8)
        self._sock.settimeout(0.2)
        self.port = self._sock.getsockname()[1]
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._serve, name="test-listener", daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except (TimeoutError, OSError):
                continue
            with conn:
                conn.settimeout(1.0)
                try:
                    data = conn.recv(4096)
                except OSError:
                    data = b""
                with self._lock:
                    self.connections.append(data)
                try:
                    conn.sendall(_ANSWER)
                except OSError:
                    pass

    def reached(self) -> list[bytes]:
        with self._lock:
            return list(self.connections)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        self._sock.close()

    def __enter__(self) -> Listener:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["Listener"]
