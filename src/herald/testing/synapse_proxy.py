"""A fault-injecting HTTP proxy in front of a real homeserver, for the Matrix adapter's
contract and liveness tests: the adapter talks to Synapse through it, the test's own
users talk to Synapse directly.

Fault modes (each what a real deployment sees from a flaky reverse proxy or network):

- `fail_sends(n)` / `fail_uploads(n)`: the next n event sends (``PUT …/send/…``) or
  media uploads answer 502;
- `storm(on)`: every request answers 502;
- `silence(on)`: ``/sync`` requests are held without an answer (a link that stays open
  and carries nothing); turned off, the held ones are cut;
- `drop_every(seconds)`: the ``/sync`` requests in flight are cut every few seconds;
- `replay_last()`: the next ``/sync`` is sent with the token that delivered the newest
  event of someone else again, so the homeserver delivers that event a second time (what
  a client that lost its sync token sees);
- `after_next_upload(action)`: `action` runs (off the proxy's loop) once the next media
  upload has reached the homeserver, before its answer goes back: something another
  client does between an upload and the event that shows it.
"""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Callable

from aiohttp import ClientSession, ClientTimeout, web

from herald.testing.aio_server import AioServerThread, PeriodicDrops

_SEND = re.compile(r"^/_matrix/client/v3/rooms/[^/]+/send/")
_UPLOAD = re.compile(r"^/_matrix/(media/v3|client/v1/media)/upload")
_HOP = {"transfer-encoding", "content-length", "connection", "content-encoding", "host"}
_BAD_GATEWAY = {"errcode": "M_UNKNOWN", "error": "Bad Gateway (test proxy)"}


class SynapseProxy(PeriodicDrops):
    def __init__(self, upstream: str, own_user_id: str) -> None:
        self.upstream = upstream.rstrip("/")
        self.own_user_id = own_user_id
        self._server = AioServerThread(self._app)
        self._lock = threading.Lock()
        self._fail_sends = 0
        self._fail_uploads = 0
        self._storm = False
        self._silent = False
        self._in_sync: dict[int, web.Request] = {}
        self._release: asyncio.Event | None = None
        self._last_event_since: str | None = None
        self._rewind: str | None = None
        self.replayed = threading.Event()
        self._session: ClientSession | None = None
        self._after_upload: Callable[[], object] | None = None

    @property
    def url(self) -> str:
        return f"http://{self._server.host}:{self._server.port}"

    def start(self) -> SynapseProxy:
        self._server.start()
        return self

    def stop(self) -> None:
        async def before() -> None:
            self.drop_every(None)
            if self._release is not None:
                self._release.set()
            if self._session is not None:
                await self._session.close()

        self._server.stop(before)

    # ---- fault switches (any thread) -------------------------------------------------------

    def fail_sends(self, times: int) -> None:
        with self._lock:
            self._fail_sends = times

    def fail_uploads(self, times: int) -> None:
        with self._lock:
            self._fail_uploads = times

    def after_next_upload(self, action: Callable[[], object]) -> None:
        with self._lock:
            self._after_upload = action

    def storm(self, on: bool) -> None:
        with self._lock:
            self._storm = on

    def silence(self, on: bool) -> None:
        def switch() -> None:
            self._silent = on
            if on:
                self._release = asyncio.Event()
            elif self._release is not None:
                self._release.set()

        self._server.call(switch)

    def drop_connections_every(self, seconds: float | None) -> None:
        self._server.call(lambda: self.drop_every(seconds))

    async def drop_all(self) -> int:
        cut = 0
        for request in list(self._in_sync.values()):
            if request.transport is not None:
                request.transport.abort()
                cut += 1
        return cut

    def replay_last(self) -> None:
        with self._lock:
            if self._last_event_since is None:
                raise RuntimeError("no event of another user went through the proxy yet")
            self._rewind = self._last_event_since
            self.replayed.clear()

    # ---- the proxy ---------------------------------------------------------------------------

    def _app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self._forward)
        return app

    def _take(self, counter: str) -> bool:
        with self._lock:
            left = getattr(self, counter)
            if left > 0:
                setattr(self, counter, left - 1)
                return True
        return False

    async def _forward(self, request: web.Request) -> web.StreamResponse:
        path = request.path
        if self._storm:
            return web.json_response(_BAD_GATEWAY, status=502)
        if request.method == "PUT" and _SEND.match(path) and self._take("_fail_sends"):
            return web.json_response(_BAD_GATEWAY, status=502)
        if request.method == "POST" and _UPLOAD.match(path) and self._take("_fail_uploads"):
            return web.json_response(_BAD_GATEWAY, status=502)
        is_sync = path == "/_matrix/client/v3/sync"
        query = dict(request.query)
        rewind = None
        if is_sync:
            if self._silent and self._release is not None:
                await self._release.wait()
                if request.transport is not None:
                    request.transport.abort()
                return web.Response(status=502)
            with self._lock:
                rewind, self._rewind = self._rewind, None
            if rewind is not None:
                query["since"] = rewind
        body = await request.read()
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP}
        if self._session is None:
            self._session = ClientSession(timeout=ClientTimeout(total=None))
        if is_sync:
            self._in_sync[id(request)] = request
        try:
            async with self._session.request(
                request.method,
                f"{self.upstream}{path}",
                params=query,
                data=body or None,
                headers=headers,
                allow_redirects=False,
            ) as upstream:
                data = await upstream.read()
                status = upstream.status
                answer_headers = {
                    k: v for k, v in upstream.headers.items() if k.lower() not in _HOP
                }
        finally:
            self._in_sync.pop(id(request), None)
        if request.method == "POST" and _UPLOAD.match(path) and status == 200:
            with self._lock:
                action, self._after_upload = self._after_upload, None
            if action is not None:
                await asyncio.to_thread(action)
        if is_sync and status == 200:
            self._note_sync(query.get("since"), data, rewound=rewind is not None)
        return web.Response(body=data, status=status, headers=answer_headers)

    def _note_sync(self, since: str | None, data: bytes, *, rewound: bool) -> None:
        import json

        try:
            rooms = json.loads(data).get("rooms", {}).get("join", {})
        except ValueError:
            return
        others = any(
            e.get("sender") != self.own_user_id and "state_key" not in e
            for room in rooms.values()
            for e in (room.get("timeline") or {}).get("events", [])
        )
        with self._lock:
            if others and since is not None and not rewound:
                self._last_event_since = since
            if rewound:
                self.replayed.set()


__all__ = ["SynapseProxy"]
