"""Issue 41, end to end with real processes: `herald gateway run` refuses to serve the
API or webhooks behind a guessable secret (the issue's `bar-secret`) and says how to
fix it; after `herald secrets new … --for …` it serves, a real client with the key gets
an answer and one with a wrong key gets 401."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import openai
import pytest

from herald.config import Secrets
from herald.gateway.platforms.webhook.signing import sign
from herald.testing.fake_llm import FakeLLMServer, Reply
from herald.testing.homes import fake_model_config, make_home, merge
from herald.testing.strong_secrets import OTHER_SECRET

SRC = str(Path(__file__).resolve().parents[2] / "src")

# kind -> (the secret's key in its section, the .env name, the full setting)
KINDS = {
    "api": ("api_key", "HERALD_API_KEY", "gateway.platforms.api.api_key"),
    "webhook": ("secret", "HERALD_WEBHOOK_SECRET", "gateway.platforms.webhook.secret"),
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


def wait_for_port(port: int, proc: subprocess.Popen, timeout: float = 45.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"the gateway exited with {proc.returncode}")
        if listening(port):
            return
        time.sleep(0.05)
    raise AssertionError(f"nothing listens on {port}")


def herald(home: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "herald", *args],
        env=env_for(home),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def env_for(home: Path) -> dict[str, str]:
    return {**os.environ, "HERALD_HOME": str(home), "PYTHONPATH": SRC}


def make_gateway_home(tmp_path: Path, fake_llm: FakeLLMServer, kind: str, port: int) -> Path:
    field, _, _ = KINDS[kind]
    section = {"enabled": True, "port": port, field: "bar-secret"}
    home = tmp_path / "home"
    make_home(home, merge(fake_model_config(fake_llm), {"gateway": {"platforms": {kind: section}}}))
    return home


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_guessable_secret_is_refused_and_a_generated_one_serves(
    kind: str, tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    _, env_name, setting = KINDS[kind]
    port = free_port()
    home = make_gateway_home(tmp_path, fake_llm, kind, port)

    refused = herald(home, "gateway", "run")
    assert refused.returncode == 1, refused.stderr
    assert f"{setting} is a placeholder, not a secret" in refused.stderr
    assert f"herald secrets new {env_name} --for {kind}" in refused.stderr
    assert not listening(port)

    made = herald(home, "secrets", "new", env_name, "--for", kind)
    assert made.returncode == 0, made.stderr
    key = Secrets(home / ".env", environ={}).get(env_name)
    assert key is not None and key not in made.stdout + made.stderr  # never printed
    assert (home / ".env").stat().st_mode & 0o777 == 0o600

    log = (tmp_path / "gateway.log").open("w")
    gateway = subprocess.Popen(
        [sys.executable, "-m", "herald", "gateway", "run"],
        env=env_for(home),
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=tmp_path,
    )
    try:
        wait_for_port(port, gateway)
        fake_llm.enqueue(Reply.text("served behind a strong key"))
        if kind == "api":
            check_api(port, key)
        else:
            check_webhook(port, key)
    finally:
        gateway.send_signal(signal.SIGTERM)
        gateway.wait(30)
        log.close()


def check_api(port: int, key: str) -> None:
    base = f"http://127.0.0.1:{port}/v1"
    client = openai.OpenAI(base_url=base, api_key=key, max_retries=0, timeout=30)
    reply = client.chat.completions.create(
        model="herald", messages=[{"role": "user", "content": "hello"}]
    )
    assert reply.choices[0].message.content == "served behind a strong key"
    wrong = openai.OpenAI(base_url=base, api_key=OTHER_SECRET, max_retries=0, timeout=30)
    with pytest.raises(openai.AuthenticationError) as caught:
        wrong.models.list()
    assert caught.value.status_code == 401


def check_webhook(port: int, secret: str) -> None:
    url = f"http://127.0.0.1:{port}/webhook/ci"
    body = b'{"text": "build 42 finished"}'

    def post(signature: str) -> httpx.Response:
        headers = {"Content-Type": "application/json", "X-Herald-Signature": signature}
        return httpx.post(url, content=body, headers=headers, timeout=30)

    good = post(sign(secret, body))
    assert good.status_code == 200, good.text
    assert good.json()["reply"] == "served behind a strong key"
    assert post(sign(OTHER_SECRET, body)).status_code == 401
