"""Helpers to start the real MCP servers the tests use."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

TOY = Path(__file__).with_name("toy_server.py")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, proc: subprocess.Popen, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on {port}")


def toy_stdio(**extra: object) -> dict[str, object]:
    return {"command": sys.executable, "args": [str(TOY)], **extra}
