"""`herald secrets new` and `herald doctor`'s entrance lines, as real subprocesses on a
tmp home: values are strong, kept 0600, never printed unless asked, never overwritten
without --force; doctor names every entrance, where it listens and whether its secret
passes, without printing a secret."""

from __future__ import annotations

from pathlib import Path

import yaml

from herald.config import Secrets, secret_problem
from herald.gateway.platforms.web import create_token
from herald.testing.homes import fake_model_config, make_home
from herald.testing.strong_secrets import API_KEY, WEBHOOK_SECRET


def env_values(home: Path) -> Secrets:
    return Secrets(home / ".env", environ={})


def test_secrets_new_writes_a_strong_value_and_wires_the_entrance(
    herald_home: Path, run_cli
) -> None:
    made = run_cli("secrets", "new", "HERALD_WEBHOOK_SECRET", "--for", "webhook")
    assert made.returncode == 0, made.stderr
    value = env_values(herald_home).get("HERALD_WEBHOOK_SECRET")
    assert value and secret_problem(value) is None and len(value) >= 43
    assert value not in made.stdout + made.stderr
    assert (herald_home / ".env").stat().st_mode & 0o777 == 0o600
    config = yaml.safe_load((herald_home / "config.yaml").read_text())
    assert config["gateway"]["platforms"]["webhook"]["secret"] == "${HERALD_WEBHOOK_SECRET}"
    assert config["model"]["provider"] == "openai"  # the rest of the file is kept

    again = run_cli("secrets", "new", "HERALD_WEBHOOK_SECRET")
    assert again.returncode == 2 and "already set" in again.stderr and "--force" in again.stderr
    assert env_values(herald_home).get("HERALD_WEBHOOK_SECRET") == value

    shown = run_cli("secrets", "new", "HERALD_WEBHOOK_SECRET", "--force", "--show")
    assert shown.returncode == 0, shown.stderr
    new_value = env_values(herald_home).get("HERALD_WEBHOOK_SECRET")
    assert shown.stdout.strip() == new_value != value


def test_secrets_new_for_mcp_names_the_secret_and_refuses_a_bad_name(
    herald_home: Path, run_cli
) -> None:
    made = run_cli("secrets", "new", "MY_MCP_TOKEN", "--for", "mcp")
    assert made.returncode == 0, made.stderr
    config = yaml.safe_load((herald_home / "config.yaml").read_text())
    assert config["mcp"]["serve"]["token_env"] == "MY_MCP_TOKEN"
    bad = run_cli("secrets", "new", "not a name")
    assert bad.returncode == 2 and "not a valid name" in bad.stderr


def test_doctor_lists_every_entrance_and_judges_its_secret(isolated_env: Path, fake_llm, run_cli):
    web_token = create_token(isolated_env)  # before make_home: it creates the home too
    assert secret_problem(web_token) is None  # the web login already meets the rule
    config = fake_model_config(fake_llm)
    config["gateway"] = {
        "platforms": {
            "api": {"enabled": True, "host": "0.0.0.0", "port": 9101, "api_key": "${K}"},
            "webhook": {"enabled": True, "port": 9102, "secret": "bar-secret"},
            "web": {"enabled": True, "port": 9103},
            "telegram": {"enabled": False},
            "matrix": {
                "enabled": True,
                "homeserver": "http://matrix.example.org",
                "user_id": "@herald:example.org",
                "access_token": "${MT}",
                "allowed_users": ["@me:example.org"],
            },
        }
    }
    env = {
        "K": API_KEY,
        "HERALD_MCP_TOKEN": web_token,
        "MT": "syt_aGVyYWxk_vHatzNXEQygcMuKHqTRr_0PEec4",
    }
    make_home(isolated_env, config, env)
    proc = run_cli("doctor", "--offline")
    out = proc.stdout
    assert proc.returncode == 1  # a failing entrance is a failure
    lines = {line.split(":")[0]: line for line in out.splitlines() if "entrance" in line}
    assert "✗ entrance webhook" in lines
    assert "http://127.0.0.1:9102" in lines["✗ entrance webhook"]
    assert "gateway.platforms.webhook.secret is a placeholder" in lines["✗ entrance webhook"]
    assert "herald secrets new HERALD_WEBHOOK_SECRET --for webhook" in out
    api = lines["! entrance api"]
    assert "0.0.0.0:9101" in api and "passes" in api and "TLS reverse proxy" in api
    assert "192 random bits" in lines["✓ entrance web chat"]
    mcp = lines["✗ entrance mcp http"]
    assert "reused with the web chat login token" in mcp
    assert "outbound only" in lines["✓ entrance telegram"]
    matrix = lines["! entrance matrix"]  # a token over plain HTTP to another host
    assert "plain HTTP" in matrix and "encryption on" in matrix
    for secret in (API_KEY, web_token, "bar-secret"):
        assert secret not in out.replace("is a placeholder", "")


def test_doctor_passes_a_home_with_generated_secrets(isolated_env: Path, fake_llm, run_cli):
    config = fake_model_config(fake_llm)
    config["gateway"] = {
        "platforms": {
            "api": {"enabled": True, "api_key": "${HERALD_API_KEY}"},
            "webhook": {"enabled": True, "secret": "${HERALD_WEBHOOK_SECRET}"},
        }
    }
    env = {"HERALD_API_KEY": API_KEY, "HERALD_WEBHOOK_SECRET": WEBHOOK_SECRET}
    make_home(isolated_env, config, env)
    out = run_cli("doctor", "--offline").stdout
    assert "✓ entrance api: http://127.0.0.1:8642/v1: gateway.platforms.api.api_key passes" in out
    assert "✓ entrance webhook: http://127.0.0.1:8643" in out
    assert "✓ entrance mcp http: not configured" in out
