"""Throwaway Herald homes wired to a fake LLM server (for tests and benchmarks)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from herald.config import HeraldHome, Secrets, Settings, load_config

FAKE_OPENAI_MODEL = "fake-gpt"
FAKE_ANTHROPIC_MODEL = "claude-fake"


def fake_model_config(server: Any, api: str = "openai", **model: Any) -> dict[str, Any]:
    """A `config.yaml` mapping whose model points at `server` (a FakeLLMServer)."""
    if api == "openai":
        base = {"provider": "openai", "name": FAKE_OPENAI_MODEL, "base_url": server.openai_base_url}
    elif api == "anthropic":
        base = {
            "provider": "anthropic",
            "name": FAKE_ANTHROPIC_MODEL,
            "base_url": server.anthropic_base_url,
        }
    else:
        raise ValueError(f"unknown api {api!r}")
    base.update(model)
    return {
        "model": base,
        # Tests must not sleep through real backoff delays.
        "agent": {"retry_base_delay": 0.0, "retry_max_delay": 0.0},
        # The background review makes extra model calls; the tests of the learning loop
        # switch it on themselves.
        "learning": {"enabled": False},
    }


def merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out


def make_home(
    root: Path,
    config: dict[str, Any] | None = None,
    env: dict[str, str] | None = None,
    *,
    profile: str | None = None,
) -> Settings:
    """Create a home at `root` with `config.yaml` and `.env`; secrets come from the
    `.env` only (the host environment is ignored, so tests never see real keys)."""
    home = HeraldHome(root, profile=profile).ensure()
    if config is not None:
        home.config_path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    env = {"OPENAI_API_KEY": "sk-test-key", "ANTHROPIC_API_KEY": "sk-ant-test-key", **(env or {})}
    home.env_path.write_text("".join(f"{k}={v}\n" for k, v in env.items()), encoding="utf-8")
    return Settings(
        home=home,
        config=load_config(home.config_path),
        secrets=Secrets(home.env_path, environ={}),
    )
