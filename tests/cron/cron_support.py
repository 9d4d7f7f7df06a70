"""Helpers shared by the cron tests: UTC instants and `herald` as a subprocess."""

from __future__ import annotations

import os
import sys
from datetime import UTC, datetime
from pathlib import Path

REPO_SRC = str(Path(__file__).resolve().parents[2] / "src")


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def herald_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERALD_")}
    env["HERALD_HOME"] = str(home)
    env["PYTHONPATH"] = REPO_SRC + os.pathsep + env.get("PYTHONPATH", "")
    return env


def herald_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "herald", *args]
