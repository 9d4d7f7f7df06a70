"""Serving an ASGI app in-process, on the gateway's own event loop (API and webhook).

uvicorn's `Server.serve()` would install its own SIGINT/SIGTERM handlers (the gateway
owns those) and calls `sys.exit` when the port is taken, so the listening socket is
bound here first (a taken port is a clear `OSError` from `start()`, port 0 picks a free
one) and the server's signal capture is switched off.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hmac
import logging
import socket
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from herald.config import (
    ConfigError,
    EntranceSecret,
    HeraldConfig,
    WeakSecretError,
    fix_hint,
    require_entrance,
    secret_problem,
)
from herald.gateway.aio import end_task
from herald.gateway.platforms.web.auth import login_token_matcher

if TYPE_CHECKING:
    from herald.config import Secrets

log = logging.getLogger(__name__)

_SHUTDOWN_SECONDS = 5


class AdapterConfigError(ConfigError):
    """An adapter cannot start with this configuration; the message says what to fix."""


def resolve_secret(value: str | None, secrets: Secrets, *, setting: str) -> str | None:
    """`value` with every ``${VAR}`` resolved through the secrets accessor (the gateway's
    one resolver); raises `MissingSecretError` naming `setting` when a reference is unset."""
    from herald.gateway.secret_refs import resolve_secret_ref

    return resolve_secret_ref(value, secrets, setting=setting)


def require_served_secret(
    entrance: EntranceSecret, config: Any, secrets: Secrets, name: str, kw: dict[str, Any]
) -> str:
    """The entrance's secret if it passes Herald's one rule (strength, no placeholder,
    not reused by another entrance, the web chat's login token included); else
    `WeakSecretError` and the adapter is never built. `config` is the whole config or
    the platform's section (then the lifecycle's ``settings`` supplies the rest)."""
    whole = config if isinstance(config, HeraldConfig) else None
    settings = kw.get("settings")
    if whole is None and settings is not None:
        whole = settings.config
    if whole is None:  # only the section was given: judge it alone
        whole = HeraldConfig()
        setattr(whole.gateway.platforms, name, config)
    home = kw.get("home") or getattr(settings, "home", None)
    if home is None and secrets.env_file is not None:
        home_root = secrets.env_file.parent
    else:
        home_root = getattr(home, "root", None)
    hashed = login_token_matcher(home_root) if home_root is not None else {}
    return require_entrance(entrance, whole, secrets, matches_hashed=hashed)


def refuse_weak_secret(entrance: EntranceSecret, value: str) -> None:
    """The adapters' own guard, for code that builds one without `create_adapter`:
    the same rule, minus the reuse check (which needs the whole config)."""
    problem = secret_problem(value)
    if problem is not None:
        raise WeakSecretError(
            f"refusing to serve: {entrance.setting} {problem}; {fix_hint(entrance)}"
        )


def platform_section(config: Any, name: str) -> Any:
    """``gateway.platforms.<name>`` from a whole `HeraldConfig`, or the section itself
    when that is what was passed (the lifecycle hands adapters their section)."""
    gateway = getattr(config, "gateway", None)
    if gateway is not None:
        return getattr(gateway.platforms, name)
    return config


def bearer_token(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header, else None."""
    if not authorization:
        return None
    scheme, _, token = authorization.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


def secret_equals(given: str | bytes | None, expected: str | bytes) -> bool:
    """Constant-time comparison (no early exit that leaks how much matched)."""
    if given is None:
        return False
    left = given.encode() if isinstance(given, str) else given
    right = expected.encode() if isinstance(expected, str) else expected
    return hmac.compare_digest(left, right)


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket; raises `OSError` naming the address when it is taken."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise OSError(f"cannot resolve host {host!r}: {exc}") from exc
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(2048)
        sock.setblocking(False)
    except OSError as exc:
        sock.close()
        raise OSError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc
    return sock


class EmbeddedServer:
    """One uvicorn server for one ASGI app, running as a task on the current loop."""

    def __init__(
        self, app: Any, *, host: str, port: int, name: str, trusted_proxies: tuple[str, ...] = ()
    ) -> None:
        self.app = app
        self.trusted_proxies = tuple(trusted_proxies)
        self.host = host
        self.requested_port = port
        self.name = name
        self._server: Any = None
        self._task: asyncio.Task[None] | None = None
        self._socket: socket.socket | None = None
        self.port: int | None = None

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    async def start(self) -> int:
        """Bind, start serving, return the bound port (useful with port 0)."""
        import uvicorn

        if self.running:
            raise RuntimeError(f"{self.name} server is already running")
        sock = bind_socket(self.host, self.requested_port)
        self._socket = sock
        self.port = int(sock.getsockname()[1])
        config = uvicorn.Config(
            self.app,
            lifespan="off",
            log_config=None,  # never reconfigure the gateway's logging
            log_level="warning",
            access_log=False,
            server_header=False,
            timeout_graceful_shutdown=_SHUTDOWN_SECONDS,
            http="h11",
            # uvicorn believes X-Forwarded-For from loopback by default, which lets any
            # local process choose the client address the login throttle counts; only
            # the proxies `gateway.trusted_proxies` names are believed.
            proxy_headers=bool(self.trusted_proxies),
            forwarded_allow_ips=list(self.trusted_proxies) or None,
        )
        server = _quiet_server_class()(config)
        self._server = server
        self._task = asyncio.create_task(server.serve(sockets=[sock]), name=f"{self.name}-http")
        while not server.started:
            if self._task.done():  # startup failed; surface why
                await self._task
                raise RuntimeError(f"{self.name} server stopped during start-up")
            await asyncio.sleep(0.005)
        log.info("%s listening on http://%s:%d", self.name, self.host, self.port)
        return self.port

    async def stop(self) -> None:
        server, task = self._server, self._task
        if server is None or task is None:
            return
        server.should_exit = True
        try:
            await asyncio.wait_for(asyncio.shield(task), _SHUTDOWN_SECONDS + 2)
        except TimeoutError:
            server.force_exit = True
            await end_task(task)
        except Exception as exc:  # the server crashed earlier; it is gone either way
            log.warning("%s server ended with an error: %s", self.name, exc)
        finally:
            if self._socket is not None:
                self._socket.close()
            self._server = self._task = self._socket = None


@functools.cache
def _quiet_server_class() -> type:
    import uvicorn

    class QuietServer(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield  # signals belong to the gateway process, not to this server

    return QuietServer
