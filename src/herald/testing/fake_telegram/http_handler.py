"""HTTP for the fake Bot API: `/bot<token>/<method>` with form, multipart or JSON
bodies (and query strings), answered with Telegram's JSON envelope. A multipart file part
becomes an `Upload` (its file name and bytes) under its field name."""

from __future__ import annotations

import json
import re
import socket
import time
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler
from typing import Any, Protocol
from urllib.parse import parse_qsl, unquote, urlsplit

from herald.testing.fake_telegram.methods import BotApi
from herald.testing.fake_telegram.records import (
    ApiCall,
    ApiError,
    DropConnection,
    Fault,
    Upload,
)
from herald.testing.fake_telegram.state import FakeTelegramState
from herald.testing.stoppable_server import StoppableHTTPServer

_PATH = re.compile(r"^/bot(?P<token>[^/]+)/(?P<method>[A-Za-z]+)/?$")
_FILE = re.compile(r"^/file/bot(?P<token>[^/]+)/(?P<path>.+)$")
_MAX_BODY = 16 * 1024 * 1024


def parse_params(content_type: str, body: bytes, query: str) -> dict[str, Any]:
    params: dict[str, Any] = dict(parse_qsl(query, keep_blank_values=True))
    if not body:
        return params
    kind = content_type.split(";", 1)[0].strip().lower()
    if kind == "application/json":
        decoded = json.loads(body.decode("utf-8"))
        if not isinstance(decoded, dict):
            raise ApiError(400, "Bad Request: request body must be a JSON object")
        params.update(decoded)
    elif kind == "multipart/form-data":
        params.update(parse_multipart(content_type, body))
    elif kind == "application/x-www-form-urlencoded" or not kind:
        params.update(parse_qsl(body.decode("utf-8"), keep_blank_values=True))
    else:
        raise ApiError(400, f"Bad Request: unsupported content type {kind} in this fake server")
    return params


def parse_multipart(content_type: str, body: bytes) -> dict[str, Any]:
    """A multipart/form-data body: text fields as strings, file parts as `Upload`s."""
    head = f"Content-Type: {content_type}\r\nMIME-Version: 1.0\r\n\r\n".encode()
    message = BytesParser(policy=HTTP).parsebytes(head + body)
    if not message.is_multipart():
        raise ApiError(400, "Bad Request: a multipart body without parts")
    fields: dict[str, Any] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if not name:
            continue
        data = part.get_payload(decode=True) or b""
        filename = part.get_filename()
        fields[str(name)] = Upload(filename, data) if filename else data.decode("utf-8")
    return fields


class BotApiHost(Protocol):
    """What a handler uses of its `FakeTelegramServer` (the server's owner)."""

    api: BotApi
    state: FakeTelegramState

    def record(self, call: ApiCall) -> None: ...


class FakeTelegramRequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-telegram-bot-api/1.0"
    sys_version = ""
    server: StoppableHTTPServer[BotApiHost]

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.server.track(self.connection)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.untrack(self.connection)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: tests read the server's records instead of an access log."""

    def do_GET(self) -> None:
        self._guarded()

    def do_POST(self) -> None:
        self._guarded()

    def _guarded(self) -> None:
        try:
            self._dispatch()
        except (ConnectionError, TimeoutError):
            self.close_connection = True  # the client went away (a cancelled long poll)

    def _dispatch(self) -> None:
        split = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(min(length, _MAX_BODY)) if length else b""
        owner = self.server.owner
        download = _FILE.match(unquote(split.path))
        if download is not None and self.command == "GET":
            self._download(download["token"], download["path"])
            return
        match = _PATH.match(split.path)
        if match is None or not owner.api.knows(match["method"]):
            self._answer(404, {"ok": False, "error_code": 404, "description": "Not Found"})
            return
        if match["token"] != owner.state.token:
            self._answer(401, {"ok": False, "error_code": 401, "description": "Unauthorized"})
            return
        method = match["method"]
        try:
            params = parse_params(self.headers.get("Content-Type", ""), body, split.query)
        except (ValueError, UnicodeDecodeError):
            params = None
        except ApiError as error:
            self._answer(error.error_code, error.payload())
            return
        if params is None:
            self._answer(400, {"ok": False, "error_code": 400, "description": "Bad Request"})
            return
        self._call(method, params)

    def _call(self, method: str, params: dict[str, Any]) -> None:
        owner = self.server.owner
        state = owner.state
        chat_id = _chat_id(params)
        with state.cond:
            storm = state.storm
            if storm is not None and (storm[2] is None or method in storm[2]):
                state.storm_hits += 1
                fault = Fault(method, storm[0], storm[1])
            else:
                fault = state.take_fault(method, chat_id)
            latency = state.latency if method.lower() != "getupdates" else 0.0
        if latency:
            time.sleep(latency)  # this handler's own thread: other calls go on
        if fault is not None and fault.drop:
            owner.record(ApiCall(method, params, "connection dropped", time.time()))
            self._drop()
            return
        try:
            if fault is not None:
                raise fault.error()
            if method.lower() == "getupdates":
                with state.cond:
                    state.polling.add(self.connection)
                try:
                    result = owner.api.call(method, params)
                finally:
                    with state.cond:
                        state.polling.discard(self.connection)
            else:
                result = owner.api.call(method, params)
        except DropConnection:
            owner.record(ApiCall(method, params, "connection dropped", time.time()))
            self._drop()
            return
        except ApiError as error:
            owner.record(ApiCall(method, params, error.description, time.time()))
            self._answer(error.error_code, error.payload())
            return
        owner.record(ApiCall(method, params, None, time.time()))
        self._answer(200, {"ok": True, "result": result})

    def _download(self, token: str, path: str) -> None:
        """A file a user sent, as the Bot API's file URL serves it."""
        state = self.server.owner.state
        with state.cond:
            data = next((d for p, d in state.files.values() if p == path), None)
            if data is not None and token == state.token:
                state.file_downloads.append(path)
                state.notify()
        if data is None or token != state.token:
            self._answer(404, {"ok": False, "error_code": 404, "description": "Not Found"})
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _drop(self) -> None:
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass  # already gone

    def _answer(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def _chat_id(params: dict[str, Any]) -> int | None:
    try:
        return int(params["chat_id"])
    except (KeyError, TypeError, ValueError):
        return None
