"""Helpers to start the real MCP servers the tests use."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import time
from pathlib import Path

TOY = Path(__file__).with_name("toy_server.py")
# An MCP server's results reach the model fenced as untrusted content (unless the server
# is configured trusted); `unfenced` gives back what the server said.
_FENCE = re.compile(
    r'\A<untrusted-content id="([0-9a-f]{12})" source="mcp:[^"]+">\n\[[^\n]*\]\n(.*)\n'
    r'</untrusted-content id="\1">\Z',
    re.DOTALL,
)


def unfenced(content: str) -> str:
    match = _FENCE.match(content)
    return match.group(2) if match else content


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
