"""`herald skills …` as real subprocesses. Skipped until the sub-app is wired into the
`herald` command (`app.add_typer(skills_cmd.app, name="skills")`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from skill_support import write_skill

from herald.testing.homes import make_home


def _herald(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "herald", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=dict(os.environ),
    )


if _herald("skills", "--help").returncode != 0:
    pytest.skip("`herald skills` is not wired into the CLI yet", allow_module_level=True)


def test_skills_commands_end_to_end(isolated_env: Path, tmp_path: Path) -> None:
    settings = make_home(isolated_env, {})
    write_skill(settings.home.skills_dir, "house-rules", description="How this house works")

    listed = _herald("skills", "list")
    assert listed.returncode == 0, listed.stderr
    assert "house-rules" in listed.stdout and "debugging" in listed.stdout

    shown = _herald("skills", "show", "house-rules")
    assert shown.returncode == 0 and "description: How this house works" in shown.stdout

    assert _herald("skills", "validate").returncode == 0
    draft = write_skill(tmp_path / "drafts", "draft", description="y" * 90)
    bad = _herald("skills", "validate", str(draft))
    assert bad.returncode == 1 and "limit is 60" in bad.stdout

    assert _herald("skills", "pin", "house-rules").returncode == 0
    assert _herald("skills", "archive", "house-rules").returncode == 0
    assert not (settings.home.skills_dir / "house-rules").exists()
    assert _herald("skills", "restore", "house-rules").returncode == 0
    assert (settings.home.skills_dir / "house-rules" / "SKILL.md").is_file()

    missing = _herald("skills", "show", "nope")
    assert missing.returncode == 2 and "no skill named" in missing.stderr
    assert _herald("skills", "rollback").returncode == 2  # no snapshot yet: a clean error
