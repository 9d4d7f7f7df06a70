"""The web chat's FastAPI app: login, the pages, static files and the guard every data
route goes through (a browser session, plus CSRF on state-changing requests).

Every response carries a strict Content-Security-Policy (scripts, styles and
connections from this origin only), so even a message that smuggled markup past the
page's escaping could not run script or reach another host.
"""

from __future__ import annotations

import json
import logging
from importlib import resources
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, RedirectResponse, Response

from herald.gateway.web.auth import (
    COOKIE_NAME,
    CSRF_HEADER,
    BrowserSession,
    BrowserSessions,
    LoginThrottle,
    NoTokenError,
    csrf_ok,
)
from herald.gateway.web.capabilities import add_capability_routes, available_tabs
from herald.gateway.web.errors import WebError
from herald.gateway.web.routes import add_data_routes

if TYPE_CHECKING:
    from herald.gateway.web.backend import WebBackend

log = logging.getLogger(__name__)

STATIC_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".svg": "image/svg+xml",
}
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}
_UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def static_text(name: str) -> str:
    return (resources.files("herald.gateway.web") / "static" / name).read_text(encoding="utf-8")


def build_web_app(adapter: WebBackend) -> FastAPI:

    settings = adapter.settings
    base = adapter.base_path
    sessions = BrowserSessions(settings.session_hours * 3600)
    throttle = LoginThrottle(settings.login_attempts_per_minute)
    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)

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
        client = request.client.host if request.client else "unknown"
        wait = throttle.retry_after(client)
        if wait > 0:
            return JSONResponse(
                {"error": f"too many failed logins; try again in {wait:.0f} s"},
                status_code=429,
                headers={"Retry-After": str(max(1, round(wait)))},
            )
        try:
            body = json.loads((await request.body()) or b"{}")
            token = str(body.get("token", "")) if isinstance(body, dict) else ""
        except (ValueError, UnicodeDecodeError):
            token = ""
        try:
            ok = adapter.verifier.verify(token.strip())
        except NoTokenError as exc:
            return JSONResponse({"error": str(exc)}, status_code=503)
        if not ok:
            throttle.failed(client)
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
