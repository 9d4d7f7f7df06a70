"""A throwaway PostgreSQL server for tests and benchmarks: initdb into a temporary
directory, `postgres` listening on 127.0.0.1 on a free port, removed on stop.

PostgreSQL refuses to run as root, so under root the server runs as the
``postgres`` system user (Debian's package creates it) with a data directory that
user owns. `find_server_binaries()` says where the binaries are, or why not.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from uuid import uuid4

from herald.testing.listener import free_port

START_TIMEOUT = 30.0


class PostgresUnavailable(RuntimeError):
    """No server can be started here; the message says why."""


@dataclass(frozen=True)
class ServerBinaries:
    bindir: Path
    user: str | None  # run as this user (None: as ourselves)


def find_server_binaries() -> ServerBinaries:
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), reverse=True)
    found = shutil.which("initdb")
    if found:
        candidates.append(found)
    for initdb in candidates:
        bindir = Path(initdb).parent
        if (bindir / "postgres").exists():
            break
    else:
        raise PostgresUnavailable(
            "no PostgreSQL server binaries (initdb, postgres) found: install the Debian "
            "package postgresql (see .ci/run)"
        )
    if os.geteuid() != 0:
        return ServerBinaries(bindir, None)
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        raise PostgresUnavailable(
            "running as root and there is no postgres system user to run the server as"
        ) from None
    return ServerBinaries(bindir, "postgres")


class PostgresServer:
    """``with PostgresServer() as pg: pg.dsn``; `new_schema_dsn()` gives each user an
    empty schema of its own on the one server."""

    def __init__(self) -> None:
        self.binaries = find_server_binaries()
        self.dir = Path(tempfile.mkdtemp(prefix="herald-kanban-pg-"))
        self.port = 0
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def dsn(self) -> str:
        return f"postgresql://herald@127.0.0.1:{self.port}/postgres"

    def _run_as(self) -> dict[str, object]:
        if self.binaries.user is None:
            return {}
        entry = pwd.getpwnam(self.binaries.user)
        return {"user": entry.pw_uid, "group": entry.pw_gid, "extra_groups": []}

    def start(self) -> PostgresServer:
        data = self.dir / "data"
        if self.binaries.user is not None:
            entry = pwd.getpwnam(self.binaries.user)
            os.chown(self.dir, entry.pw_uid, entry.pw_gid)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "LC_ALL": "C",
            "HOME": str(self.dir),
        }
        init = subprocess.run(
            [
                str(self.binaries.bindir / "initdb"),
                "-D",
                str(data),
                "-U",
                "herald",
                "--auth=trust",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync",
                "--no-instructions",
            ],
            capture_output=True,
            env=env,
            cwd=self.dir,
            **self._run_as(),  # type: ignore[arg-type]
        )
        if init.returncode != 0:
            raise PostgresUnavailable(f"initdb failed: {init.stderr.decode(errors='replace')}")
        for _ in range(5):  # another process may take the free port first
            self.port = free_port()
            log = open(self.dir / "server.log", "ab")  # noqa: SIM115 - the server keeps it
            self._proc = subprocess.Popen(
                [
                    str(self.binaries.bindir / "postgres"),
                    "-D",
                    str(data),
                    "-p",
                    str(self.port),
                    "-k",
                    str(self.dir),
                    "-c",
                    "listen_addresses=127.0.0.1",
                    "-c",
                    "fsync=off",
                    "-c",
                    "synchronous_commit=off",
                    "-c",
                    "full_page_writes=off",
                    "-c",
                    "max_connections=200",
                ],
                stdout=log,
                stderr=log,
                env=env,
                cwd=self.dir,
                **self._run_as(),  # type: ignore[arg-type]
            )
            log.close()
            if self._wait_ready():
                return self
            self._stop_process()
        raise PostgresUnavailable(
            f"postgres did not start: {(self.dir / 'server.log').read_text(errors='replace')[-2000:]}"
        )

    def _wait_ready(self) -> bool:
        import psycopg

        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self._proc is not None and self._proc.poll() is not None:
                return False
            try:
                psycopg.connect(self.dsn, connect_timeout=2).close()
                return True
            except psycopg.OperationalError:
                time.sleep(0.1)
        return False

    def new_schema_dsn(self) -> str:
        """A DSN whose tables land in a fresh, empty schema."""
        import psycopg

        name = f"t_{uuid4().hex[:12]}"
        with psycopg.connect(self.dsn, autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {name}")
        return f"{self.dsn}?options=-csearch_path%3D{name}"

    def _stop_process(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.send_signal(2)  # SIGINT: fast shutdown, clients are disconnected
            try:
                self._proc.wait(10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        self._proc = None

    def stop(self) -> None:
        self._stop_process()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> PostgresServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
