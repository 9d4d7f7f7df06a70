"""Skill-library fixtures: a real home in tmp_path, skill writers and a fake clock."""

from __future__ import annotations

from pathlib import Path

import pytest
from skill_support import FakeClock

from herald.config import Settings
from herald.skills import SkillLibrary
from herald.testing.homes import make_home


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return make_home(tmp_path / "home", {})


@pytest.fixture
def bundled(tmp_path: Path) -> Path:
    """An empty stand-in for the bundled skills (tests add what they need)."""
    path = tmp_path / "bundled"
    path.mkdir()
    return path


@pytest.fixture
def library(settings: Settings, bundled: Path, clock: FakeClock) -> SkillLibrary:
    return SkillLibrary(settings.home, settings.config, bundled_dir=bundled, clock=clock)
