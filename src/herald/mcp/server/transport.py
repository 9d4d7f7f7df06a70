"""Running Herald's MCP server: over stdio, or streamable HTTP behind a bearer token.

HTTP always needs the token (the secret named by ``mcp.serve.token_env``): the
server reads your sessions and memory and runs turns. Without the secret, or with
one that fails Herald's entrance-secret rule (`herald.config.require_entrance`:
guessable, a placeholder, or another entrance's secret), it refuses to start, on
loopback too, since any local process or web page could otherwise use it. Every request without the right
``Authorization: Bearer`` header gets 401.
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from herald.config import ENTRANCE_SECRETS, WeakSecretError, is_loopback, require_entrance
from herald.safety import BodyRule, RequestGuard

if TYPE_CHECKING:
    from herald.config import Settings

log = logging.getLogger(__name__)


class ServeError(Exception):
    """The server cannot start as asked; the message says what to change."""


def parse_address(text: str) -> tuple[str, int]:
    host, sep, port_text = text.rpartition(":")
    if not sep or not host or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise ServeError(f"--http wants HOST:PORT (for example 127.0.0.1:8765), not {text!r}")
    return host.strip("[]"), int(port_text)


class BearerAuth:
    """ASGI middleware: 401 unless the request carries the token."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = dict(scope.get("headers") or [])
            given = headers.get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                body = b'{"error": "unauthorized: send Authorization: Bearer <token>"}'
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"www-authenticate", b"Bearer"),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


MAX_BODY_BYTES = 4 * 1024 * 1024  # one JSON-RPC message
MAX_JSON_DEPTH = 64


def _body_rule(method: str, _path: str) -> BodyRule:
    return BodyRule(MAX_BODY_BYTES, json_depth=MAX_JSON_DEPTH if method == "POST" else None)


def _refusal(status: int, code: str, message: str) -> Any:
    from starlette.responses import JSONResponse

    return JSONResponse({"error": message, "code": code}, status_code=status)


def serve_stdio(settings: Settings) -> None:
    import anyio

    from herald.mcp.server.app import build_server
    from herald.state import StateStore

    with StateStore(settings.home.state_db) as store:
        server = build_server(settings, store)
        anyio.run(server.run_stdio_async)


def http_app(settings: Settings, store: Any, host: str, token: str) -> Any:
    from herald.mcp.server.app import build_server

    server = build_server(settings, store)
    app = server.streamable_http_app(host=host)
    app.router.redirect_slashes = False  # its Location would come from the client's Host
    guarded = RequestGuard(app, rule_for=_body_rule, refuse=_refusal)
    return BearerAuth(guarded, token)  # auth first: a stranger's body is never read


def serve_http(
    settings: Settings,
    address: str,
    *,
    announce: Callable[[str], None] = print,
    matches_hashed: Mapping[str, Callable[[str], bool]] = {},
) -> None:
    """Serve until stopped. `matches_hashed` lets the reuse check see secrets kept only
    as hashes (the web chat's login token), which the caller knows how to test."""
    import uvicorn

    from herald.state import StateStore

    host, port = parse_address(address)
    token_env = settings.config.mcp.serve.token_env
    token = settings.secrets.get(token_env)
    if not token:
        where = "a non-loopback address" if not is_loopback(host) else "HTTP"
        raise ServeError(
            f"refusing to serve MCP over {where} without a bearer token: set {token_env} in "
            f"{settings.home.env_path} (a long random string) and give clients "
            "'Authorization: Bearer <token>'; make one with: herald secrets new "
            f"{token_env} --for mcp"
        )
    try:
        token = require_entrance(
            ENTRANCE_SECRETS["mcp"],
            settings.config,
            settings.secrets,
            matches_hashed=matches_hashed,
        )
    except WeakSecretError as exc:
        raise ServeError(str(exc)) from None
    with StateStore(settings.home.state_db) as store:
        app = http_app(settings, store, host, token)
        announce(f"Herald MCP server on http://{host}:{port}/mcp (bearer token from {token_env})")
        config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
        uvicorn.Server(config).run()
