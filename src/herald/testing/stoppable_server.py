"""A threaded loopback HTTP server that stops at once, shared by the fake servers.

`serve_forever` notices a shutdown only at its next poll tick; this server also
waits on a wake-up socket, so `wake_and_stop` ends the accept loop immediately.
Handlers reach their fake's state through `server.owner`; the server is generic in
the owner's type, so a handler module names the owner as a protocol of what it
uses and never imports the fake that imports it.
"""

from __future__ import annotations

import selectors
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Generic, TypeVar

OwnerT = TypeVar("OwnerT")


class StoppableHTTPServer(ThreadingHTTPServer, Generic[OwnerT]):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 64

    def __init__(
        self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler], owner: OwnerT
    ) -> None:
        self.owner = owner
        super().__init__(address, handler)
        self._wake_reader, self._wake_writer = socket.socketpair()
        self._stopping = False
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()

    @property
    def stopping(self) -> bool:
        return self._stopping

    def serve_until_stopped(self) -> None:
        """Accept connections until `wake_and_stop`."""
        with selectors.DefaultSelector() as selector:
            selector.register(self.socket, selectors.EVENT_READ)
            selector.register(self._wake_reader, selectors.EVENT_READ)
            while not self._stopping:
                for key, _ in selector.select():
                    if key.fileobj is self.socket and not self._stopping:
                        self._handle_request_noblock()

    def serve_in_thread(self, name: str) -> threading.Thread:
        thread = threading.Thread(target=self.serve_until_stopped, name=name, daemon=True)
        thread.start()
        return thread

    def stop_serving(self, thread: threading.Thread, grace: float) -> None:
        """End the accept loop, close the listening socket and cut tracked connections."""
        self.wake_and_stop()
        thread.join(grace)
        self.server_close()
        self.cut_connections()

    def wake_and_stop(self) -> None:
        self._stopping = True
        try:
            self._wake_writer.send(b"x")
        except OSError:
            pass

    # Open connections, so a stop can cut long polls and stalled streams.
    def track(self, connection: socket.socket) -> None:
        with self._connections_lock:
            self._connections.add(connection)

    def untrack(self, connection: socket.socket) -> None:
        with self._connections_lock:
            self._connections.discard(connection)

    @property
    def open_connections(self) -> int:
        """Client connections open now (kept-alive idle ones included)."""
        with self._connections_lock:
            return len(self._connections)

    def cut_connections(self) -> None:
        with self._connections_lock:
            connections = list(self._connections)
        for connection in connections:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def server_close(self) -> None:
        super().server_close()
        self._wake_reader.close()
        self._wake_writer.close()

    def handle_error(self, request: Any, client_address: Any) -> None:
        error = sys.exc_info()[1]
        if isinstance(error, OSError) or self._stopping:
            return  # clients hanging up (cancelled polls, cut streams) and shutdown are routine
        super().handle_error(request, client_address)
