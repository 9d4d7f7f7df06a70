"""Real MCP servers shared by the MCP tests (the toy server over HTTP)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest
from mcp_servers import TOY, free_port, wait_for_port


@pytest.fixture(scope="session")
def toy_http_url() -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(TOY), "--http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, proc)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(10)
