from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from herald.testing.homes import fake_model_config, make_home


def _engine_calls_stream_discard() -> bool:
    """Whether the turn engine calls `TurnCallbacks.on_stream_discard` before a retry
    (the faults helper's half of issue 13; the surfaces consume it)."""
    import herald.engine as engine

    package = Path(engine.__file__).parent
    return any(
        "on_stream_discard" in path.read_text(encoding="utf-8")
        for path in package.glob("*.py")
        if path.name != "callbacks.py"
    )


needs_engine_stream_discard = pytest.mark.xfail(
    not _engine_calls_stream_discard(),
    reason="the engine does not call on_stream_discard yet (faults helper, issue 13)",
    strict=True,
)


@pytest.fixture
def herald_home(isolated_env: Path, fake_llm) -> Path:
    """The HERALD_HOME the CLI subprocesses use, configured for the fake server."""
    make_home(isolated_env, fake_model_config(fake_llm))
    return isolated_env


@pytest.fixture
def run_cli():
    def run(*args: str, timeout: float = 60, input: str | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "herald", *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            input=input,
            env=dict(os.environ),
        )

    return run
