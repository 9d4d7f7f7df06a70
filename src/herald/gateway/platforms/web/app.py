"""The web chat's FastAPI app: login, the pages, static files and the guard every data
route goes through (a browser session, plus CSRF on state-changing requests).

Every response carries a strict Content-Security-Policy (scripts, styles and
connections from this origin only), so even a message that smuggled markup past the
page's escaping could not run script or reach another host.
"""

from __future__ import annotations

import asyncio
import json
import logging
from importlib import resources
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, RedirectResponse, Response

from herald.gateway.platforms.web.auth import (
    COOKIE_NAME,
    CSRF_HEADER,
    BrowserSession,
    BrowserSessions,
    LoginThrottle,
    NoTokenError,
    csrf_ok,
)
from herald.gateway.platforms.web.capabilities import add_capability_routes, available_tabs
from herald.gateway.platforms.web.errors import WebError
from herald.gateway.platforms.web.routes import add_data_routes
from herald.safety import BodyRule, RequestGuard

if TYPE_CHECKING:
    from herald.gateway.platforms.web.backend import WebBackend

log = logging.getLogger(__name__)

STATIC_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".svg": "image/svg+xml",
}
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; media-src 'self'; "
        "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}
_UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
# Body limits, checked before anything is read or parsed (`RequestGuard`). A login is
# a token in a tiny JSON object; other JSON bodies carry at most one message
# (`routes.MAX_TEXT` characters, up to 6 bytes each once JSON-escaped).
LOGIN_BODY_BYTES = 4 * 1024
JSON_BODY_BYTES = 1024 * 1024
JSON_DEPTH = 16
OTHER_BODY_BYTES = 1024  # GET and friends carry no body worth reading
THROTTLED_ANSWER_DELAY = 1.0  # seconds a refused login waits before its 429


def static_text(name: str) -> str:
    return (resources.files("herald.gateway.platforms.web") / "static" / name).read_text(
        encoding="utf-8"
    )


def build_web_app(adapter: WebBackend) -> FastAPI:

    settings = adapter.settings
    base = adapter.base_path
    sessions = BrowserSessions(settings.session_hours * 3600)
    throttle = LoginThrottle(settings.login_attempts_per_minute)
    # redirect_slashes off: Starlette builds that redirect's Location from the Host
    # header, which a stranger controls; the one redirect the chat needs is explicit.
    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None, redirect_slashes=False)
    upload_bytes = int(settings.max_upload_mb * 1024 * 1024)

    def body_rule(method: str, path: str) -> BodyRule:
        if path == base + "/login":
            return BodyRule(LOGIN_BODY_BYTES, json_depth=2)
        if method == "PUT" and path.startswith(base + "/api/chats/") and "/files/" in path:
            return BodyRule(upload_bytes)  # streamed to disk, counted as it arrives
        if method in _UNSAFE_METHODS:
            return BodyRule(JSON_BODY_BYTES, json_depth=JSON_DEPTH)
        return BodyRule(OTHER_BODY_BYTES)

    def refuse(status: int, _code: str, message: str) -> Any:
        return JSONResponse({"error": message}, status_code=status, headers=SECURITY_HEADERS)

    # Added before the login/CSRF guard below, so it runs inside it: a stranger's body
    # for /api/ is refused unread (401) before this even counts it.
    app.add_middleware(RequestGuard, rule_for=body_rule, refuse=refuse)

    def page(name: str) -> Response:
        html = static_text(name).replace("{{BASE}}", base)
        return Response(html, media_type=STATIC_TYPES[".html"])

    def secure(request: Request) -> bool:
        if settings.secure_cookie is not None:
            return settings.secure_cookie
        proto = request.headers.get("x-forwarded-proto", request.url.scheme)
        return proto.split(",")[0].strip().lower() == "https"

    def current(request: Request) -> BrowserSession | None:
        return sessions.get(request.cookies.get(COOKIE_NAME))

    @app.middleware("http")
    async def guard(request: Request, call_next: Any) -> Response:
        path = request.url.path
        if base and not (path == base or path.startswith(base + "/")):
            response: Response = JSONResponse({"error": "not found"}, status_code=404)
        elif path.startswith(base + "/api/"):
            session = current(request)
            if session is None:
                response = JSONResponse(
                    {"error": "not logged in: open the page and log in with your token"},
                    status_code=401,
                )
            elif request.method in _UNSAFE_METHODS and not csrf_ok(
                session, request.headers.get(CSRF_HEADER)
            ):
                response = JSONResponse(
                    {"error": "missing or wrong CSRF token; reload the page"}, status_code=403
                )
            else:
                request.state.browser = session
                response = await call_next(request)
        else:
            response = await call_next(request)
        for name, value in SECURITY_HEADERS.items():
            response.headers.setdefault(name, value)
        return response

    @app.exception_handler(WebError)
    async def web_error(_request: Request, exc: WebError) -> Response:
        return JSONResponse({"error": exc.message}, status_code=exc.status)

    @app.exception_handler(RequestValidationError)
    async def invalid(_request: Request, exc: RequestValidationError) -> Response:
        first = (exc.errors() or [{}])[0]
        where = ".".join(str(p) for p in first.get("loc", ()) if p not in ("path", "query"))
        return JSONResponse(
            {"error": f"invalid {where or 'request'}: {first.get('msg', 'bad value')}"},
            status_code=400,
        )

    @app.get(base + "/")
    async def index(request: Request) -> Response:
        if current(request) is None:
            return RedirectResponse(base + "/login", status_code=303)
        return page("index.html")

    if base:

        @app.get(base)
        async def bare_base() -> Response:
            return RedirectResponse(base + "/", status_code=308)

    @app.get(base + "/login")
    async def login_page() -> Response:
        return page("login.html")

    @app.post(base + "/login")
    async def login(request: Request) -> Response:
        # The peer address: uvicorn rewrites it from X-Forwarded-For only for the proxies
        # gateway.trusted_proxies names, so a client cannot pick the address counted here.
        client = request.client.host if request.client else "unknown"
        wait = throttle.charge(client)  # charged before the check, handed back on success
        if wait > 0:
            # Answer a throttled guess late: the wait costs a sleeping coroutine, not CPU,
            # and a client hammering the login gets a handful of answers a second
            # instead of hundreds that would crowd every platform's event loop.
            await asyncio.sleep(min(wait, THROTTLED_ANSWER_DELAY))
            return JSONResponse(
                {"error": f"too many failed logins; try again in {wait:.0f} s"},
                status_code=429,
                headers={"Retry-After": str(max(1, round(wait)))},
            )
        try:
            body = json.loads((await request.body()) or b"{}")
            token = str(body.get("token", "")) if isinstance(body, dict) else ""
        except (ValueError, UnicodeDecodeError, RecursionError):
            token = ""
        try:
            ok = await adapter.verifier.verify_async(token.strip())
        except NoTokenError as exc:
            return JSONResponse({"error": str(exc)}, status_code=503)
        if not ok:
            log.warning("failed web login from %s", client)
            return JSONResponse({"error": "wrong token"}, status_code=401)
        throttle.succeeded(client)
        session = sessions.create()
        response = JSONResponse({"ok": True, "csrf": session.csrf})
        response.set_cookie(
            COOKIE_NAME,
            session.sid,
            max_age=int(settings.session_hours * 3600),
            path=base + "/",
            httponly=True,
            samesite="strict",
            secure=secure(request),
        )
        return response

    @app.post(base + "/logout")
    async def logout(request: Request) -> Response:
        session = current(request)
        if session is not None and csrf_ok(session, request.headers.get(CSRF_HEADER)):
            sessions.end(session.sid)
        response = JSONResponse({"ok": True})
        response.delete_cookie(COOKIE_NAME, path=base + "/")
        return response

    @app.get(base + "/static/{name}")
    async def static(name: str) -> Response:
        suffix = name[name.rfind(".") :] if "." in name else ""
        if "/" in name or name.startswith(".") or suffix not in STATIC_TYPES:
            return JSONResponse({"error": "not found"}, status_code=404)
        try:
            text = static_text(name)
        except (FileNotFoundError, OSError):
            return JSONResponse({"error": "not found"}, status_code=404)
        return Response(text, media_type=STATIC_TYPES[suffix])

    @app.get(base + "/api/me")
    async def me(request: Request) -> dict[str, Any]:
        session: BrowserSession = request.state.browser
        return {"csrf": session.csrf, "base_path": base, "tabs": available_tabs()}

    add_data_routes(app, adapter, base)
    add_capability_routes(app, adapter, base + "/api")
    return app


__all__ = ["build_web_app", "static_text"]
