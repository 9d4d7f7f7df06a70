"""A scripted HTTP server on 127.0.0.1 for the web tool tests (no tests here).

Routes map a path to a function returning (status, headers, body); every
request is recorded (path, query, headers) so tests can check what was sent.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

Response = tuple[int, dict[str, str], bytes]
Route = Callable[["Recorded"], Response]


@dataclass
class Recorded:
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]


class LocalHTTPServer:
    def __init__(self) -> None:
        self.routes: dict[str, Route] = {}
        self.requests: list[Recorded] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                record = Recorded(
                    parts.path,
                    parse_qs(parts.query),
                    {k.lower(): v for k, v in self.headers.items()},
                )
                server.requests.append(record)
                route = server.routes.get(parts.path)
                status, headers, body = route(record) if route else (404, {}, b"not found")
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def route(self, path: str, status: int = 200, body: bytes | str = b"", **headers: str) -> None:
        data = body.encode() if isinstance(body, str) else body
        fixed = {k.replace("_", "-"): v for k, v in headers.items()}
        self.routes[path] = lambda _request: (status, fixed, data)

    def __enter__(self) -> LocalHTTPServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(5)
