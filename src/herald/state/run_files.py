"""The running gateway's files in a home: ``gateway/gateway.pid`` and
``gateway/status.json`` (state, platforms, running turns). Written by the gateway,
read by anything that wants to know whether one runs (`herald gateway status`, the
MCP server's ``send_message``)."""

from __future__ import annotations

import json
import logging
import os
import time
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from herald.config.shared_file import atomic_write
from herald.environments.processes import pid_alive

if TYPE_CHECKING:
    from herald.config import HeraldHome

log = logging.getLogger(__name__)


@dataclass
class GatewayStatus:
    running: bool
    pid: int | None = None
    state: str = "stopped"  # starting | running | draining | stopped
    started_at: float | None = None
    updated_at: float | None = None
    platforms: list[str] = field(default_factory=list)
    running_turns: int = 0
    live_agents: int = 0  # agents held in memory (the gateway's agent cache)
    detail: str = ""
    # Per platform (herald.gateway.health.PlatformHealth as a dict): state, reason, last
    # receive/send, restarts in the last hour, undelivered replies.
    health: list[dict[str, Any]] = field(default_factory=list)
    transitions: list[dict[str, Any]] = field(default_factory=list)  # newest last
    undelivered: list[dict[str, Any]] = field(default_factory=list)  # oldest first


class RunFiles:
    def __init__(self, home: HeraldHome):
        self.dir = home.root / "gateway"
        self.pid_path = self.dir / "gateway.pid"
        self.status_path = self.dir / "status.json"

    def running_pid(self) -> int | None:
        """The pid of a live gateway of this home, else None (a stale file is ignored)."""
        try:
            pid = int(self.pid_path.read_text().strip())
        except (OSError, ValueError):
            return None
        return pid if pid != os.getpid() and pid_alive(pid) else None

    def write_pid(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        atomic_write(self.pid_path, f"{os.getpid()}\n")

    def remove_pid(self) -> None:
        try:
            if int(self.pid_path.read_text().strip()) == os.getpid():
                self.pid_path.unlink()
        except (OSError, ValueError):
            pass

    def write_status(self, status: GatewayStatus) -> None:
        status.updated_at = time.time()
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            atomic_write(self.status_path, json.dumps(asdict(status), indent=2))
        except OSError as exc:
            log.warning("could not write %s: %s", self.status_path, exc)

    def read_status(self) -> GatewayStatus:
        pid = self.running_pid()
        try:
            data = json.loads(self.status_path.read_text(encoding="utf-8"))
            data.pop("running", None)
            status = GatewayStatus(running=False, **data)
        except (OSError, ValueError, TypeError):
            status = GatewayStatus(running=False, state="starting" if pid else "stopped")
        if pid is None:
            if status.state != "stopped":
                status.detail = "not running (the last run did not shut down cleanly)"
            status.state, status.running, status.pid = "stopped", False, None
            return status
        status.running, status.pid = True, pid
        return status


__all__ = ["GatewayStatus", "RunFiles"]
