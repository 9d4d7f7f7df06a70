"""`Skill`: one skill as the library loaded it (its front matter, body, files and
usage state).

It sits below both `herald.skills.library`, which builds skills, and
`herald.skills.index`, which renders them into the system prompt, so neither
imports the other back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from herald.skills.usage import SkillState
from herald.skills.validation import SKILL_FILE, SkillMeta

SkillSource = Literal["home", "bundled", "external"]


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    version: str
    path: Path  # the skill directory
    source: SkillSource
    category: str
    tags: tuple[str, ...]
    platforms: tuple[str, ...]
    created_by: str | None
    pinned: bool
    body: str
    files: tuple[str, ...]
    related_skills: tuple[str, ...] = ()
    state: SkillState = "active"
    available: bool = True  # False when `platforms` excludes this OS
    meta: SkillMeta | None = field(default=None, compare=False, repr=False)

    @property
    def skill_file(self) -> Path:
        return self.path / SKILL_FILE

    @property
    def read_only(self) -> bool:
        return self.source != "home"

    @property
    def agent_created(self) -> bool:
        return self.created_by == "agent"
