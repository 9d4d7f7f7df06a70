"""Config sections `skills`, `curator` and `learning`: the skill library, its curator and
the background review that writes memories and skills after a turn."""

from __future__ import annotations

from herald.config.strict import StrictModel


class SkillsConfig(StrictModel):
    pass


class CuratorConfig(StrictModel):
    pass


class LearningConfig(StrictModel):
    pass
