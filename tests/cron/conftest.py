"""Cron fixtures: a home wired to the fake LLM server, its cron store, the scheduler,
and `herald` run as a real subprocess against that home."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from cron_support import herald_cmd, herald_env

from herald.config import Settings
from herald.cron.store import CronStore
from herald.testing.homes import fake_model_config, make_home, merge


@pytest.fixture
def cron_settings(tmp_path: Path, fake_llm: Any) -> Callable[..., Settings]:
    def make(extra: dict[str, Any] | None = None) -> Settings:
        base = merge(
            fake_model_config(fake_llm),
            {
                "model": {"stream": False},
                "agent": {"max_retries": 0},
                "cron": {"cwd": str(tmp_path / "work"), "timezone": "UTC"},
            },
        )
        return make_home(tmp_path / "home", merge(base, extra or {}))

    return make


@pytest.fixture
def cron_store(cron_settings: Callable[..., Settings]) -> Iterator[CronStore]:
    settings = cron_settings()
    with CronStore.for_home(settings.home) as store:
        yield store


@pytest.fixture
def herald(tmp_path: Path) -> Callable[..., subprocess.CompletedProcess]:
    """Run ``herald ARGS`` in a subprocess on the test home; returns the finished process."""

    def run(*args: str, check: bool = True, timeout: float = 60) -> subprocess.CompletedProcess:
        home = tmp_path / "home"  # the home cron_settings made
        done = subprocess.run(
            herald_cmd(*args), env=herald_env(home), capture_output=True, text=True,
            timeout=timeout, check=False,
        )  # fmt: skip
        if check and done.returncode != 0:
            raise AssertionError(
                f"herald {' '.join(args)} exited {done.returncode}\n{done.stdout}\n{done.stderr}"
            )
        return done

    return run
