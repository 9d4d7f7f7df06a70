"""Issue 41 for `herald mcp serve --http`, as real subprocesses: a guessable bearer token
(the issue's `bar-secret`) or one another entrance uses is refused with the setting,
the reason and the command that makes a good one; after `herald secrets new … --for
mcp` the server starts, the real MCP client with the token lists the tools and a wrong
token gets 401."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_servers import free_port, wait_for_port

from herald.config import Secrets
from herald.testing.homes import make_home
from herald.testing.strong_secrets import API_KEY, OTHER_SECRET

SRC = str(Path(__file__).resolve().parents[2] / "src")


def env_for(home: Path) -> dict[str, str]:
    return {**os.environ, "HERALD_HOME": str(home), "PYTHONPATH": SRC}


def herald(home: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "herald", *args],
        env=env_for(home),
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_guessable_token_is_refused_even_on_loopback(tmp_path: Path) -> None:
    home = tmp_path / "home"
    make_home(home, {}, {"HERALD_MCP_TOKEN": "bar-secret"})
    port = free_port()
    refused = herald(home, "mcp", "serve", "--http", f"127.0.0.1:{port}")
    assert refused.returncode == 2
    assert "HERALD_MCP_TOKEN (the secret mcp.serve.token_env names) is a placeholder" in (
        refused.stderr
    )
    assert "herald secrets new HERALD_MCP_TOKEN --for mcp --force" in refused.stderr


def test_a_token_reused_from_the_api_is_refused(tmp_path: Path) -> None:
    home = tmp_path / "home"
    config = {"gateway": {"platforms": {"api": {"api_key": "${HERALD_API_KEY}"}}}}
    make_home(home, config, {"HERALD_MCP_TOKEN": API_KEY, "HERALD_API_KEY": API_KEY})
    refused = herald(home, "mcp", "serve", "--http", f"127.0.0.1:{free_port()}")
    assert refused.returncode == 2
    assert "reused with gateway.platforms.api.api_key" in refused.stderr
    assert API_KEY not in refused.stderr


async def test_a_generated_token_serves_and_a_wrong_one_gets_401(tmp_path: Path) -> None:
    home = tmp_path / "home"
    make_home(home, {}, {"HERALD_MCP_TOKEN": "changeme"})
    made = herald(home, "secrets", "new", "HERALD_MCP_TOKEN", "--for", "mcp", "--force")
    assert made.returncode == 0, made.stderr
    token = Secrets(home / ".env", environ={}).get("HERALD_MCP_TOKEN")
    assert token is not None and token != "changeme" and token not in made.stderr
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "herald", "mcp", "serve", "--http", f"127.0.0.1:{port}"],
        env=env_for(home),
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        wait_for_port(port, server, timeout=30)
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
        async with http, Client(streamable_http_client(url, http_client=http)) as client:
            names = {t.name for t in (await client.list_tools()).tools}
        assert "agent_run" in names
        async with httpx.AsyncClient() as plain:
            wrong = await plain.post(
                url, json={}, headers={"Authorization": f"Bearer {OTHER_SECRET}"}
            )
        assert wrong.status_code == 401
    finally:
        server.terminate()
        server.wait(10)
