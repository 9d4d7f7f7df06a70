from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from herald.testing.homes import fake_model_config, make_home


@pytest.fixture
def herald_home(isolated_env: Path, fake_llm) -> Path:
    """The HERALD_HOME the CLI subprocesses use, configured for the fake server."""
    make_home(isolated_env, fake_model_config(fake_llm))
    return isolated_env


@pytest.fixture
def run_cli():
    def run(
        *args: str, timeout: float = 60, input: str | None = None
    ) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "herald", *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            input=input,
            env=dict(os.environ),
        )

    return run
