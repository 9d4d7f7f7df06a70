"""How the fake Slack hands events to the app: Socket Mode envelopes over a websocket
(hello, envelopes, acks, ping/pong, disconnect/refresh), or signed HTTP POSTs to a
Request URL, each retried like Slack retries an event that was not acknowledged
(same `event_id`, a new envelope / `X-Slack-Retry-Num`). Runs on the server's loop.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import time
from typing import Any
from urllib.parse import urlencode

import aiohttp
from aiohttp import WSMsgType, web

from herald.testing.aio_server import PeriodicDrops
from herald.testing.fake_slack.records import Envelope
from herald.testing.fake_slack.world import SlackWorld

MAX_RETRIES = 3  # Slack retries an unacknowledged event three times


def sign(secret: str, timestamp: str, body: bytes) -> str:
    base = b"v0:" + timestamp.encode() + b":" + body
    return "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


class FakeDelivery(PeriodicDrops):
    def __init__(self, world: SlackWorld) -> None:
        self.world = world
        self.pongs = True
        self.silent = False
        self.retry_unacked_after: float | None = None  # seconds; None: no retries
        self.http_target: str | None = None  # a Request URL: events go over HTTP instead
        self.sockets: list[web.WebSocketResponse] = []
        self.pending: list[Envelope] = []  # not yet sent down any socket
        self._http: aiohttp.ClientSession | None = None
        self._tasks: set[asyncio.Future[Any]] = set()

    # ---- Socket Mode ------------------------------------------------------------------------------

    async def handle(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(autoping=False, max_msg_size=0)
        await ws.prepare(request)
        self.sockets.append(ws)
        with self.world.cond:
            self.world.counters.connections += 1
            self.world.changed()
        hello = {
            "type": "hello",
            "num_connections": len(self.sockets),
            "debug_info": {"host": "fake-slack", "approximate_connection_time": 18060},
            "connection_info": {"app_id": self.world.app_id},
        }
        try:
            if not self.silent:  # a silent server says nothing at all, not even hello
                await ws.send_str(json.dumps(hello))
            await self.flush()
            async for msg in ws:
                if msg.type is WSMsgType.PING:
                    with self.world.cond:
                        self.world.counters.pings += 1
                    if self.pongs and not self.silent:
                        await ws.pong(msg.data)
                elif msg.type is WSMsgType.TEXT:
                    self._on_ack(json.loads(msg.data))
        except (ConnectionError, RuntimeError):
            pass
        finally:
            if ws in self.sockets:
                self.sockets.remove(ws)
        return ws

    def _on_ack(self, message: dict[str, Any]) -> None:
        envelope_id = message.get("envelope_id")
        with self.world.cond:
            for envelope in self.world.envelopes:
                if envelope.envelope_id == envelope_id and not envelope.acked:
                    envelope.acked = True
                    envelope.ack_payload = message.get("payload")
                    self.world.counters.acks += 1
            self.world.changed()

    async def deliver(self, envelope: Envelope) -> None:
        with self.world.cond:
            self.world.envelopes.append(envelope)
            self.world.changed()
        if self.http_target is not None:
            self._spawn(self._post_http(envelope))
            return
        self.pending.append(envelope)
        await self.flush()
        if self.retry_unacked_after is not None and envelope.retry_attempt < MAX_RETRIES:
            self._spawn(self._retry_if_unacked(envelope, self.retry_unacked_after))

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def flush(self) -> None:
        if self.silent:
            return
        while self.pending and self.sockets:
            envelope = self.pending[0]
            ws = self.sockets[-1]
            body = {
                "envelope_id": envelope.envelope_id,
                "type": envelope.type,
                "payload": envelope.payload,
                "accepts_response_payload": envelope.type != "events_api",
                "retry_attempt": envelope.retry_attempt,
                "retry_reason": "timeout" if envelope.retry_attempt else "",
            }
            try:
                await ws.send_str(json.dumps(body))
            except (ConnectionError, RuntimeError):
                if ws in self.sockets:
                    self.sockets.remove(ws)
                continue
            self.pending.pop(0)
            with self.world.cond:
                self.world.counters.envelopes_sent += 1
                self.world.changed()

    async def _retry_if_unacked(self, envelope: Envelope, after: float) -> None:
        await asyncio.sleep(after)
        if envelope.acked:
            return
        if envelope in self.pending:
            return  # never went out; it still will
        again = Envelope(
            envelope_id=self.world.next_id("env-"),
            type=envelope.type,
            payload=envelope.payload,
            retry_attempt=envelope.retry_attempt + 1,
        )
        await self.deliver(again)

    # ---- HTTP events ------------------------------------------------------------------------------

    async def _post_http(self, envelope: Envelope) -> None:
        if self._http is None:
            self._http = aiohttp.ClientSession()
        if envelope.type == "events_api":
            body = json.dumps(envelope.payload).encode()
            content_type = "application/json"
        elif envelope.type == "interactive":
            body = urlencode({"payload": json.dumps(envelope.payload)}).encode()
            content_type = "application/x-www-form-urlencoded"
        else:
            body = urlencode(envelope.payload).encode()
            content_type = "application/x-www-form-urlencoded"
        for attempt in range(MAX_RETRIES + 1):
            timestamp = str(int(time.time()))
            headers = {
                "Content-Type": content_type,
                "X-Slack-Request-Timestamp": timestamp,
                "X-Slack-Signature": sign(self.world.signing_secret, timestamp, body),
            }
            if attempt:
                headers["X-Slack-Retry-Num"] = str(attempt)
                headers["X-Slack-Retry-Reason"] = "http_error"
            status = 0
            try:
                async with self._http.post(
                    str(self.http_target),
                    data=body,
                    headers=headers,
                    timeout=aiohttp.ClientTimeout(total=3),
                ) as response:
                    status = response.status
                    answer = await response.read()
            except (TimeoutError, aiohttp.ClientError):
                answer = b""
            with self.world.cond:
                self.world.counters.http_deliveries.append(status)
                if status == 200:
                    envelope.acked = True
                    if answer.startswith(b"{"):
                        envelope.ack_payload = json.loads(answer)
                self.world.changed()
            if status == 200 or self.retry_unacked_after is None:
                return
            await asyncio.sleep(self.retry_unacked_after)

    # ---- faults ---------------------------------------------------------------------------------

    async def drop_all(self) -> int:
        dropped = 0
        for ws in list(self.sockets):
            dropped += 1
            transport = ws._req.transport if ws._req is not None else None
            if transport is not None:
                transport.abort()
            self.sockets.remove(ws)
        with self.world.cond:
            self.world.counters.drops += dropped
            self.world.changed()
        return dropped

    async def send_disconnect(self, reason: str) -> None:
        for ws in list(self.sockets):
            body = {"type": "disconnect", "reason": reason, "debug_info": {"host": "fake-slack"}}
            try:
                await ws.send_str(json.dumps(body))
            except (ConnectionError, RuntimeError):
                pass

    async def close(self) -> None:
        self.drop_every(None)
        for ws in list(self.sockets):
            await ws.close(code=1001)
        if self._http is not None:
            await self._http.close()
