from __future__ import annotations

import os
from pathlib import Path

import pytest
from home_support import populate

from herald.config import HeraldHome


@pytest.fixture
def home(isolated_env: Path) -> HeraldHome:
    return populate(isolated_env)


@pytest.fixture
def herald_env() -> dict[str, str]:
    env = dict(os.environ)
    src = str(Path(__file__).resolve().parents[2] / "src")
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    return env
