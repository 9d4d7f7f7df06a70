"""Helpers for the skill tests: SKILL.md text, skill writers and a fake clock."""

from __future__ import annotations

from pathlib import Path
from typing import Any

DAY = 86_400.0


def skill_text(
    name: str,
    description: str = "Do a thing the careful way",
    *,
    version: str | None = "1.0.0",
    body: str = "# Steps\n\n1. Look.\n2. Act.\n",
    extra: str = "",
) -> str:
    lines = ["---", f"name: {name}", f"description: {description}"]
    if version is not None:
        lines.append(f"version: {version}")
    if extra:
        lines.append(extra.rstrip("\n"))
    lines.append("---")
    return "\n".join(lines) + "\n" + body


def write_skill(root: Path, name: str, text: str | None = None, **kwargs: Any) -> Path:
    skill_dir = root / name
    skill_dir.mkdir(parents=True, exist_ok=True)
    (skill_dir / "SKILL.md").write_text(
        text if text is not None else skill_text(name, **kwargs), encoding="utf-8"
    )
    return skill_dir


class FakeClock:
    def __init__(self, start: float = 1_700_000_000.0):
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, days: float = 0.0, hours: float = 0.0) -> None:
        self.now += days * DAY + hours * 3600
