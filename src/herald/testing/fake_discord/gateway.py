"""The fake Discord gateway: one websocket endpoint speaking opcodes 0-11 as JSON text.

Hello → identify → READY (+ GUILD_CREATE per guild), heartbeats acknowledged, dispatches
numbered per session and kept for RESUME (replayed after the client's sequence, then
RESUMED), op 9 for a refused resume. Faults: acks that stop, a connection that stays
open and says nothing, connections cut at once or every few seconds, op 7 reconnect.
Everything here runs on the server's own loop.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSMsgType, web

from herald.testing.aio_server import PeriodicDrops
from herald.testing.fake_discord.world import DiscordWorld

OP_DISPATCH, OP_HEARTBEAT, OP_IDENTIFY, OP_RESUME = 0, 1, 2, 6
OP_RECONNECT, OP_INVALID_SESSION, OP_HELLO, OP_HEARTBEAT_ACK = 7, 9, 10, 11


@dataclass
class GatewaySession:
    session_id: str
    seq: int = 0
    events: list[dict[str, Any]] = field(default_factory=list)  # every dispatch, for resume
    socket: web.WebSocketResponse | None = None
    heartbeat_seq: int = 0  # the last sequence the client said it received


class FakeGateway(PeriodicDrops):
    def __init__(self, world: DiscordWorld, heartbeat_interval_ms: int) -> None:
        self.world = world
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self.acks = True
        self.silent = False
        self.refuse_resumes = 0
        self.resume_url = ""  # set by the server once it knows its port
        self.sessions: dict[str, GatewaySession] = {}
        self.current: GatewaySession | None = None
        self.waiting: list[tuple[str, dict[str, Any]]] = []  # before any session exists
        self.sockets: set[web.WebSocketResponse] = set()

    # ---- the websocket --------------------------------------------------------------------------

    async def handle(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(autoping=True, max_msg_size=0)
        await ws.prepare(request)
        self.sockets.add(ws)
        with self.world.cond:
            self.world.gateway.connections += 1
            self.world.changed()
        session: GatewaySession | None = None
        try:
            if not self.silent:  # a silent server says nothing at all, not even hello
                hello = {"heartbeat_interval": self.heartbeat_interval_ms}
                await self._send(ws, {"op": OP_HELLO, "d": hello})
            async for msg in ws:
                if msg.type is not WSMsgType.TEXT:
                    continue
                payload = json.loads(msg.data)
                session = await self._on_payload(ws, payload, session)
        finally:
            self.sockets.discard(ws)
            if session is not None and session.socket is ws:
                session.socket = None
        return ws

    async def _on_payload(
        self, ws: web.WebSocketResponse, payload: dict[str, Any], session: GatewaySession | None
    ) -> GatewaySession | None:
        op, data = payload.get("op"), payload.get("d")
        if op == OP_HEARTBEAT:
            with self.world.cond:
                self.world.gateway.heartbeats += 1
                if session is not None and isinstance(data, int):
                    session.heartbeat_seq = data
                if self.acks and not self.silent:
                    self.world.gateway.acks_sent += 1
                self.world.changed()
            if self.acks and not self.silent:
                await self._send(ws, {"op": OP_HEARTBEAT_ACK})
            return session
        if op == OP_IDENTIFY:
            if data.get("token") != self.world.token:
                await ws.close(code=4004, message=b"Authentication failed.")
                return session
            return await self._identify(ws, data)
        if op == OP_RESUME:
            return await self._resume(ws, data)
        return session  # presence updates, member requests: accepted and ignored

    async def _identify(self, ws: web.WebSocketResponse, data: dict[str, Any]) -> GatewaySession:
        session = GatewaySession(session_id=uuid.uuid4().hex)
        with self.world.cond:
            self.world.gateway.identifies += 1
            self.world.gateway.intents.append(int(data.get("intents", 0)))
            self.sessions[session.session_id] = session
            self.current = session
            session.socket = ws
            guild_ids = list(self.world.guilds)
            ready = {
                "v": 10,
                "user": self.world.bot_user,
                "guilds": [{"id": str(g), "unavailable": True} for g in guild_ids],
                "session_id": session.session_id,
                "resume_gateway_url": self.resume_url,
                "application": {"id": str(self.world.application_id), "flags": 0},
                "private_channels": [],
                "relationships": [],
            }
            guilds = [self.world.guild_json(g) for g in guild_ids]
            waiting, self.waiting = self.waiting, []
            self.world.changed()
        await self.dispatch_now("READY", ready)
        for guild in guilds:
            await self.dispatch_now("GUILD_CREATE", guild)
        for event, body in waiting:
            await self.dispatch_now(event, body)
        return session

    async def _resume(
        self, ws: web.WebSocketResponse, data: dict[str, Any]
    ) -> GatewaySession | None:
        session = self.sessions.get(str(data.get("session_id")))
        refused = session is None or data.get("token") != self.world.token
        if not refused and self.refuse_resumes > 0:
            self.refuse_resumes -= 1
            refused = True
        if refused or session is None:
            with self.world.cond:
                self.world.gateway.resumes_refused += 1
                self.world.changed()
            await self._send(ws, {"op": OP_INVALID_SESSION, "d": False})
            return None
        with self.world.cond:
            self.world.gateway.resumes += 1
            session.socket = ws
            self.current = session
            after = int(data.get("seq") or 0)
            missed = [e for e in session.events if e["s"] > after]
            self.world.changed()
        if self.silent:
            return session  # the replay waits for the next resume after the silence
        for event in missed:
            await self._send(ws, event)
        await self.dispatch_now("RESUMED", {})
        waiting, self.waiting = self.waiting, []
        for event, body in waiting:
            await self.dispatch_now(event, body)
        return session

    async def _send(self, ws: web.WebSocketResponse, payload: dict[str, Any]) -> None:
        if ws.closed:
            return
        try:
            await ws.send_str(json.dumps(payload))
        except (ConnectionError, RuntimeError):
            pass  # the connection went away; resume will replay what it missed

    # ---- dispatch (on the loop) --------------------------------------------------------------------

    async def dispatch_now(self, event: str, data: dict[str, Any]) -> None:
        """Number and send an event. With no connection at all, it waits for the next
        session (as if it happened after the bot came back), so a test's event is never
        lost to a restart; events a connected client missed come back on RESUME."""
        session = self.current
        if session is None or (session.socket is None and event not in ("READY", "RESUMED")):
            self.waiting.append((event, data))
            return
        session.seq += 1
        payload = {"op": OP_DISPATCH, "t": event, "s": session.seq, "d": data}
        session.events.append(payload)
        if session.socket is not None and not self.silent:
            await self._send(session.socket, payload)

    def all_seen(self) -> bool:
        """Every event went out and the client's last heartbeat confirmed the newest."""
        session = self.current
        return (
            not self.waiting
            and session is not None
            and session.socket is not None
            and session.heartbeat_seq >= session.seq
        )

    # ---- faults (on the loop) -------------------------------------------------------------------------

    async def drop_all(self, code: int | None = None) -> int:
        """Cut every gateway connection: abruptly, or with a close `code` (4000 resumes)."""
        dropped = 0
        for ws in list(self.sockets):
            dropped += 1
            if code is None:
                transport = ws._req.transport if ws._req is not None else None
                if transport is not None:
                    transport.abort()
            else:
                await ws.close(code=code)
        with self.world.cond:
            self.world.gateway.drops += dropped
            self.world.changed()
        return dropped

    async def send_op(self, op: int, data: Any = None) -> None:
        for ws in list(self.sockets):
            await self._send(ws, {"op": op, "d": data})

    async def close(self) -> None:
        self.drop_every(None)
        for ws in list(self.sockets):
            await ws.close(code=1001)
