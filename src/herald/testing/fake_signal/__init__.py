"""A fake of signal-cli's HTTP daemon (``signal-cli -a NUMBER daemon --http``) for tests.

It speaks what Herald's Signal adapter uses, the way signal-cli does:

- ``POST /api/v1/rpc``: JSON-RPC 2.0 (``send`` to recipients or a ``groupId``, with
  ``quoteTimestamp``/``quoteAuthor`` and ``attachments``; ``sendTyping``;
  ``sendReaction``; ``getAttachment`` by id with the `recipient` or `groupId` it came
  from, answered ``{"data": <base64>}``), answered with ``{"result": …}`` or a JSON-RPC error;
- ``GET /api/v1/events``: a Server-Sent Events stream, one ``event:receive`` with a
  ``data:`` line of ``{"envelope": …, "account": …}`` per incoming message, and a
  ``:`` keep-alive comment every ``keepalive`` seconds (signal-cli: 15 s);
- ``GET /api/v1/check``: 200.

Tests play the other people (`user_message`, `react`), read what Herald sent
(`sent`), and break the link: `silence` (the stream stays open and says nothing),
`drop_connections_every`, `storm` (every call a 500), `fail_sends`.
"""

from __future__ import annotations

import base64
import json
import os
import threading
import time
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any

from herald.testing.stoppable_server import StoppableHTTPServer


@dataclass
class SignalSent:
    timestamp: int
    recipients: tuple[str, ...]
    group_id: str | None
    text: str
    quote_timestamp: int | None = None
    quote_author: str | None = None
    attachments: tuple[str, ...] = ()
    # The attachments signal-cli would upload, as (file name, bytes): a data URI decoded,
    # a path read from disk (signal-cli reads it on its own machine).
    files: tuple[tuple[str, bytes], ...] = ()
    voice_note: bool = False  # sent with `voiceNote` (a voice message, not a file)


def attachment_file(attachment: str) -> tuple[str, bytes]:
    """What signal-cli sends for one `attachments` entry: a data URI
    (``data:<MIME>;filename=<NAME>;base64,<DATA>``) or a path on its machine."""
    if attachment.startswith("data:"):
        header, _, payload = attachment.partition(",")
        fields = dict(
            part.split("=", 1) for part in header[len("data:") :].split(";") if "=" in part
        )
        if not header.endswith(";base64"):
            raise ValueError("only base64 data URIs are supported")
        return fields.get("filename", "attachment"), base64.b64decode(payload, validate=True)
    with open(attachment, "rb") as handle:
        return os.path.basename(attachment), handle.read()


class FakeSignalServer:
    def __init__(self, account: str = "+15550000001", *, keepalive: float = 15.0) -> None:
        self.account = account
        self.keepalive = keepalive
        self.sent: list[SignalSent] = []
        self.typing: list[str] = []
        # What people attached, by attachment id (signal-cli keeps what it received in
        # its attachments folder), and the ids `getAttachment` was asked for.
        self.stored: dict[str, bytes] = {}
        self.attachment_reads: list[str] = []
        self.reactions: list[dict[str, Any]] = []
        self.edits = 0
        # Seconds a `send` answer waits after the message is recorded: the person on the
        # other side can see (and react to) it before Herald learns its timestamp.
        self.send_answer_delay = 0.0
        self._lock = threading.Lock()
        self._clock = int(time.time() * 1000)
        # Messages wait here until a listening stream takes them, as they wait on
        # Signal's servers until the linked device receives them: nothing is lost.
        self._pending: deque[str] = deque()
        self._arrived = threading.Condition(self._lock)
        self._history: list[str] = []  # every event, for replays
        self._silent = False
        self._storm = False
        self._fail_sends = 0
        self._fail_uploads = 0  # sends that carry attachments
        self._drop_every: float | None = None
        self._server: StoppableHTTPServer[FakeSignalServer] | None = None
        self._thread: threading.Thread | None = None
        self._dropper: threading.Thread | None = None
        self.connections = 0  # event streams opened so far

    # -- life cycle -------------------------------------------------------------------

    def start(self) -> FakeSignalServer:
        self._server = StoppableHTTPServer(("127.0.0.1", 0), _Handler, self)
        self._thread = self._server.serve_in_thread("fake-signal")
        return self

    def stop(self) -> None:
        self._drop_every = None
        if self._server is not None and self._thread is not None:
            self._server.stop_serving(self._thread, 5)
        self._server = None

    def __enter__(self) -> FakeSignalServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    # -- playing the other people -----------------------------------------------------

    def _timestamp(self) -> int:
        with self._lock:
            self._clock += 1
            return self._clock

    def user_message(
        self,
        source: str,
        text: str,
        *,
        group_id: str | None = None,
        quote: SignalSent | None = None,
        attachments: list[dict[str, Any]] | None = None,
        mentions_bot: bool = False,
        name: str | None = None,
    ) -> int:
        """`name` is the sender's profile name, which any sender sets as they like."""
        ts = self._timestamp()
        data: dict[str, Any] = {
            "timestamp": ts,
            "message": text,
            "expiresInSeconds": 0,
            "viewOnce": False,
            "attachments": attachments or [],
            "mentions": (
                [{"name": self.account, "number": self.account, "start": 0, "length": 1}]
                if mentions_bot
                else []
            ),
        }
        if group_id:
            data["groupInfo"] = {"groupId": group_id, "type": "DELIVER"}
        if quote is not None:
            data["quote"] = {
                "id": quote.timestamp,
                "author": self.account,
                "authorNumber": self.account,
                "text": quote.text,
            }
        self._emit(source, ts, {"dataMessage": data}, name=name)
        return ts

    def attach(
        self, name: str | None, mime: str, data: bytes, *, voice: bool = False
    ) -> dict[str, Any]:
        """An attachment for `user_message`, as signal-cli lists it in a received message
        (its bytes kept for ``getAttachment``). A Signal voice note has no file name."""
        with self._lock:
            attachment_id = f"att{len(self.stored) + 1}-{self._clock}"
            self.stored[attachment_id] = data
        return {
            "contentType": mime,
            "filename": None if voice else name,
            "id": attachment_id,
            "size": len(data),
            "isVoiceNote": voice,
        }

    def react(self, source: str, emoji: str, target: SignalSent) -> int:
        ts = self._timestamp()
        data: dict[str, Any] = {
            "timestamp": ts,
            "reaction": {
                "emoji": emoji,
                "targetAuthor": self.account,
                "targetAuthorNumber": self.account,
                "targetSentTimestamp": target.timestamp,
                "isRemove": False,
            },
        }
        if target.group_id:
            data["groupInfo"] = {"groupId": target.group_id, "type": "DELIVER"}
        self._emit(source, ts, {"dataMessage": data})
        return ts

    def replay_last(self) -> None:
        with self._lock:
            last = self._history[-1]
        self._publish(last)

    def _emit(self, source: str, ts: int, body: dict[str, Any], *, name: str | None = None) -> None:
        envelope = {
            "source": source,
            "sourceNumber": source,
            "sourceUuid": f"uuid-{source.lstrip('+')}",
            "sourceName": name or f"User {source[-4:]}",
            "sourceDevice": 1,
            "timestamp": ts,
            **body,
        }
        line = json.dumps({"envelope": envelope, "account": self.account})
        with self._lock:
            self._history.append(line)
        self._publish(line)

    def _publish(self, line: str) -> None:
        with self._arrived:
            self._pending.append(line)
            self._arrived.notify_all()

    def next_event(self, timeout: float) -> str | None:
        """The oldest waiting message, or None after `timeout` (time for a keep-alive)."""
        with self._arrived:
            if not self._pending or self._silent:
                self._arrived.wait(timeout)
            if self._silent or not self._pending:
                return None
            return self._pending.popleft()

    def drained(self) -> bool:
        """Every message so far was taken by a listening stream."""
        with self._lock:
            return not self._pending

    def put_back(self, line: str) -> None:
        with self._arrived:
            self._pending.appendleft(line)

    # -- faults -------------------------------------------------------------------------

    def silence(self, on: bool) -> None:
        if not on and self._server is not None:
            self._server.cut_connections()  # whatever hung is cut, before it may speak
        with self._arrived:
            self._silent = on
            self._arrived.notify_all()

    def storm(self, on: bool) -> None:
        """Every call answers 502, as behind a proxy whose backend went away: the open
        event streams go with it."""
        self._storm = on
        if on and self._server is not None:
            self._server.cut_connections()

    def fail_sends(self, times: int) -> None:
        self._fail_sends = times

    def fail_uploads(self, times: int) -> None:
        """The next `times` sends with attachments fail (signal-cli cannot upload)."""
        self._fail_uploads = times

    def drop_connections_every(self, seconds: float | None) -> None:
        self._drop_every = seconds
        if seconds is not None and (self._dropper is None or not self._dropper.is_alive()):
            self._dropper = threading.Thread(target=self._drop_loop, daemon=True)
            self._dropper.start()

    def _drop_loop(self) -> None:
        while self._drop_every is not None and self._server is not None:
            time.sleep(self._drop_every)
            if self._drop_every is not None and self._server is not None:
                self._server.cut_connections()

    # -- what the handler calls ---------------------------------------------------------

    def rpc(self, request: dict[str, Any]) -> dict[str, Any]:
        rid = request.get("id")
        method = request.get("method")
        params = request.get("params") or {}
        if method == "send":
            if self._fail_sends > 0:
                self._fail_sends -= 1
                return _error(rid, -1, "Failed to send message: network failure (fake)")
            if self._fail_uploads > 0 and (params.get("attachments") or params.get("attachment")):
                self._fail_uploads -= 1
                return _error(rid, -1, "Failed to send message: attachment upload failed (fake)")
            recipients = params.get("recipient") or []
            if isinstance(recipients, str):
                recipients = [recipients]
            if not recipients and not params.get("groupId"):
                return _error(rid, -32602, "No recipients given")
            edited = params.get("editTimestamp")
            if edited is not None:
                with self._lock:
                    target = next((m for m in self.sent if m.timestamp == edited), None)
                    if target is None:
                        return _error(rid, -32602, f"no message {edited} to edit")
                    target.text = params.get("message") or ""
                    self.edits += 1
                return {"jsonrpc": "2.0", "result": {"timestamp": self._timestamp()}, "id": rid}
            ts = self._timestamp()
            attachments = params.get("attachments") or params.get("attachment") or []
            if isinstance(attachments, str):
                attachments = [attachments]
            try:
                files = tuple(attachment_file(str(a)) for a in attachments)
            except (OSError, ValueError) as exc:
                return _error(rid, -1, f"Failed to read attachment: {exc}")
            with self._lock:
                self.sent.append(
                    SignalSent(
                        ts,
                        tuple(recipients),
                        params.get("groupId"),
                        params.get("message") or "",
                        params.get("quoteTimestamp"),
                        params.get("quoteAuthor"),
                        tuple(attachments),
                        files,
                        bool(params.get("voiceNote")),
                    )
                )
            if self.send_answer_delay:
                time.sleep(self.send_answer_delay)
            return {"jsonrpc": "2.0", "result": {"timestamp": ts}, "id": rid}
        if method == "getAttachment":
            with self._lock:
                data = self.stored.get(str(params.get("id")))
                self.attachment_reads.append(str(params.get("id")))
            if data is None or not (params.get("recipient") or params.get("groupId")):
                return _error(rid, -1, f"Attachment file not found: {params.get('id')}")
            encoded = base64.b64encode(data).decode("ascii")
            return {"jsonrpc": "2.0", "result": {"data": encoded}, "id": rid}
        if method == "sendTyping":
            target = params.get("groupId") or params.get("recipient")
            with self._lock:
                self.typing.append(str(target))
            return {"jsonrpc": "2.0", "result": {}, "id": rid}
        if method == "sendReaction":
            with self._lock:
                self.reactions.append(dict(params))
            return {"jsonrpc": "2.0", "result": {"timestamp": self._timestamp()}, "id": rid}
        return _error(rid, -32601, f"Method not implemented: {method}")

    def sent_to(self, chat: str) -> list[SignalSent]:
        with self._lock:
            return [s for s in self.sent if s.group_id == chat or chat in s.recipients]


def _error(rid: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "error": {"code": code, "message": message}, "id": rid}


class _Handler(BaseHTTPRequestHandler):
    server: StoppableHTTPServer[FakeSignalServer]
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def _json(self, status: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        fake = self.server.owner
        if self.path.startswith("/api/v1/check"):
            self._json(502 if fake._storm else 200, {})
            return
        if not self.path.startswith("/api/v1/events"):
            self._json(404, {})
            return
        if fake._storm:
            self._json(502, {"error": "Bad Gateway"})
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        self.wfile.flush()
        with fake._lock:
            fake.connections += 1
        self.server.track(self.connection)
        try:
            while not self.server.stopping:
                line = fake.next_event(fake.keepalive)
                if line is None:
                    if not fake._silent:
                        self.wfile.write(b":\n")
                        self.wfile.flush()
                    continue
                try:
                    self.wfile.write(f"event:receive\ndata:{line}\n\n".encode())
                    self.wfile.flush()
                except OSError:
                    fake.put_back(line)
                    raise
        except OSError:
            pass
        finally:
            self.server.untrack(self.connection)
            self.close_connection = True

    def do_POST(self) -> None:
        fake = self.server.owner
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        if not self.path.startswith("/api/v1/rpc"):
            self._json(404, {})
            return
        if fake._storm:
            self._json(502, {"error": "Bad Gateway"})
            return
        try:
            request = json.loads(body)
        except ValueError:
            self._json(200, _error(None, -32700, "Parse error"))
            return
        if isinstance(request, list):
            self._json(200, [fake.rpc(r) for r in request])
        else:
            self._json(200, fake.rpc(request))


__all__ = ["FakeSignalServer", "SignalSent"]
