"""A real Matrix homeserver for tests: Synapse (PyPI ``matrix-synapse``), started in a
temporary folder with SQLite, listening on 127.0.0.1 only.

`SynapseServer` writes a throwaway ``homeserver.yaml`` (no federation, no public
registration, rate limits out of the way, a registration shared secret), starts
``python -m synapse.app.homeserver`` on a free port and waits until
``/_matrix/client/versions`` answers. Test users are made through the admin API's
shared-secret registration (`register`), which answers with an access token and a
device id. `database` is Synapse's own SQLite file: tests read ``events`` and
``event_json`` from it to see exactly what reached the homeserver.

Synapse takes seconds to start, so tests share one server per worker (a
session-scoped fixture) and give each test users and rooms of its own.
"""

from __future__ import annotations

import atexit
import base64
import contextlib
import hashlib
import hmac
import json
import os
import secrets
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from herald.testing.listener import free_port

SERVER_NAME = "herald.test"


class SynapseUnavailable(RuntimeError):
    """Synapse is not installed or would not start; the message says why."""


@dataclass(frozen=True)
class MatrixUser:
    user_id: str
    password: str
    access_token: str
    device_id: str


class SynapseServer:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.host = "127.0.0.1"
        self.port = 0
        self.shared_secret = secrets.token_hex(16)
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def database(self) -> Path:
        return self.root / "homeserver.db"

    # -- life cycle ---------------------------------------------------------------------

    def start(self, timeout: float = 120.0) -> SynapseServer:
        try:
            import synapse  # noqa: F401
        except ImportError:
            raise SynapseUnavailable(
                "matrix-synapse is not installed (pip install 'herald[dev]')"
            ) from None
        self.root.mkdir(parents=True, exist_ok=True)
        (self.root / "media").mkdir(exist_ok=True)
        self.port = free_port()
        self._write_config()
        # The child writes to its own copy of the descriptor: ours is closed at once.
        with (self.root / "stderr.log").open("wb") as log:
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "synapse.app.homeserver", "-c", str(self.root / "hs.yaml")],
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=self.root,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise SynapseUnavailable(f"synapse exited at start: {self._log_tail()}")
            versions = f"{self.url}/_matrix/client/versions"
            with contextlib.suppress(OSError), urllib.request.urlopen(versions, timeout=2):
                return self
            time.sleep(0.2)
        self.stop()
        raise SynapseUnavailable(
            f"synapse did not answer within {timeout:.0f} s: {self._log_tail()}"
        )

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None or proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)

    def __enter__(self) -> SynapseServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)

    # -- users and requests --------------------------------------------------------------

    def register(self, localpart: str, password: str | None = None) -> MatrixUser:
        """A new user by the admin API's shared-secret registration (HMAC-SHA1 over the
        nonce, user, password and admin flag)."""
        password = password or secrets.token_hex(12)
        nonce = self.request("GET", "/_synapse/admin/v1/register")["nonce"]
        mac = hmac.new(self.shared_secret.encode(), digestmod=hashlib.sha1)
        mac.update(b"\x00".join([nonce.encode(), localpart.encode(), password.encode()]))
        mac.update(b"\x00notadmin")
        answer = self.request(
            "POST",
            "/_synapse/admin/v1/register",
            {
                "nonce": nonce,
                "username": localpart,
                "password": password,
                "admin": False,
                "mac": mac.hexdigest(),
            },
        )
        return MatrixUser(answer["user_id"], password, answer["access_token"], answer["device_id"])

    def request(
        self, method: str, path: str, body: Any = None, *, token: str | None = None
    ) -> dict[str, Any]:
        """One client-server API call, synchronously; the answer's JSON."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(f"{self.url}{path}", data=data, method=method)
        request.add_header("Content-Type", "application/json")
        if token:
            request.add_header("Authorization", f"Bearer {token}")
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return json.loads(response.read() or b"{}")
        except urllib.error.HTTPError as error:
            detail = error.read().decode(errors="replace")[:300]
            raise RuntimeError(f"{method} {path}: {error.code} {detail}") from None

    def send(self, user: MatrixUser, room_id: str, event_type: str, content: dict[str, Any]) -> str:
        """`user` sends an event into `room_id`; its event id."""
        room = urllib.parse.quote(room_id)
        path = f"/_matrix/client/v3/rooms/{room}/send/{event_type}/{uuid.uuid4().hex}"
        return str(self.request("PUT", path, content, token=user.access_token)["event_id"])

    def upload(self, user: MatrixUser, name: str, mime: str, data: bytes) -> str:
        """`data` into the media repository as `user`; its mxc:// URI."""
        query = urllib.parse.urlencode({"filename": name})
        request = urllib.request.Request(
            f"{self.url}/_matrix/media/v3/upload?{query}", data=data, method="POST"
        )
        request.add_header("Content-Type", mime)
        request.add_header("Authorization", f"Bearer {user.access_token}")
        with urllib.request.urlopen(request, timeout=30) as response:
            return str(json.loads(response.read())["content_uri"])

    def events(self, room_id: str, sender: str | None = None) -> list[dict[str, Any]]:
        """The events of `room_id` (from `sender`) as the homeserver stored them, oldest
        first, read from its database: what reached the server, whatever any client shows."""
        query = (
            "SELECT e.event_id, j.json FROM events e JOIN event_json j ON j.event_id = e.event_id"
            " WHERE e.room_id = ?"
            + (" AND e.sender = ?" if sender else "")
            + " ORDER BY e.stream_ordering"
        )
        args = (room_id, sender) if sender else (room_id,)
        with contextlib.closing(sqlite3.connect(self.database, timeout=30)) as db:
            rows = db.execute(query, args).fetchall()
        return [{**json.loads(row[1]), "event_id": row[0]} for row in rows]

    def media(self, mxc: str) -> bytes:
        """A local upload's bytes, from the media store."""
        media_id = mxc.rsplit("/", 1)[-1]
        path = self.root / "media" / "local_content" / media_id[:2] / media_id[2:4] / media_id[4:]
        return path.read_bytes()

    # -- internals ----------------------------------------------------------------------------

    def _log_tail(self) -> str:
        texts = []
        for name in ("stderr.log", "homeserver.log"):
            path = self.root / name
            if path.exists():
                texts.append(path.read_text(errors="replace")[-1500:])
        return " | ".join(t.strip() for t in texts if t.strip()) or "no log"

    def _write_config(self) -> None:
        r = self.root
        seed = base64.b64encode(os.urandom(32)).decode().rstrip("=")
        (r / "signing.key").write_text(f"ed25519 a_test {seed}\n")
        (r / "log.yaml").write_text(
            "version: 1\n"
            "formatters: {plain: {format: '%(asctime)s %(name)s %(levelname)s %(message)s'}}\n"
            "handlers:\n"
            f"  file: {{class: logging.FileHandler, filename: {r}/homeserver.log,"
            " formatter: plain}\n"
            "root: {level: WARNING, handlers: [file]}\n"
            "disable_existing_loggers: false\n"
        )
        unlimited = {"per_second": 10000, "burst_count": 10000}
        config = {
            "server_name": SERVER_NAME,
            "pid_file": str(r / "homeserver.pid"),
            "listeners": [
                {
                    "port": self.port,
                    "bind_addresses": [self.host],
                    "type": "http",
                    "tls": False,
                    "x_forwarded": False,
                    "resources": [{"names": ["client", "media"], "compress": False}],
                }
            ],
            "database": {"name": "sqlite3", "args": {"database": str(self.database)}},
            "log_config": str(r / "log.yaml"),
            "media_store_path": str(r / "media"),
            "signing_key_path": str(r / "signing.key"),
            "registration_shared_secret": self.shared_secret,
            "macaroon_secret_key": secrets.token_hex(16),
            "form_secret": secrets.token_hex(16),
            "report_stats": False,
            "enable_metrics": False,
            "trusted_key_servers": [],
            "suppress_key_server_warning": True,
            "federation_domain_whitelist": [],
            "enable_registration": False,
            "url_preview_enabled": False,
            # Each test registers its own users: Synapse's default of 12 bcrypt rounds
            # cost ~0.4 s per user on this machine; passwords here guard nothing.
            "bcrypt_rounds": 4,
            "presence": {"enabled": False},
            "rc_message": unlimited,
            "rc_registration": unlimited,
            "rc_joins": {"local": unlimited, "remote": unlimited},
            "rc_invites": {"per_room": unlimited, "per_user": unlimited, "per_issuer": unlimited},
            "rc_login": {
                "address": unlimited,
                "account": unlimited,
                "failed_attempts": unlimited,
            },
            "rc_admin_redaction": unlimited,
            "rc_key_requests": unlimited,
        }
        # JSON is YAML: no YAML writer needed.
        (r / "hs.yaml").write_text(json.dumps(config, indent=1))


_shared: SynapseServer | SynapseUnavailable | None = None


def shared_synapse() -> SynapseServer:
    """One Synapse for this process (a test worker), started on first use and removed
    when the process exits; tests make users and rooms of their own on it. Raises
    `SynapseUnavailable` (every time, after one try) when it cannot start."""
    global _shared
    if isinstance(_shared, SynapseUnavailable):
        raise _shared
    if _shared is None:
        root = Path(tempfile.mkdtemp(prefix="herald-synapse-"))
        server = SynapseServer(root)
        try:
            server.start()
        except SynapseUnavailable as exc:
            shutil.rmtree(root, ignore_errors=True)
            _shared = exc
            raise
        atexit.register(server.remove)
        _shared = server
    return _shared


def unique(prefix: str) -> str:
    """A user name no other test on the shared server has."""
    return f"{prefix}{uuid.uuid4().hex[:8]}"


__all__ = [
    "SERVER_NAME",
    "MatrixUser",
    "SynapseServer",
    "SynapseUnavailable",
    "shared_synapse",
    "unique",
]
