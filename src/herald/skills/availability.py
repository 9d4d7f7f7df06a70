"""Whether the skill tools are offered: a check light enough to run before any of them
(or the skill library) is imported (the tool catalog, herald.toolbox, names it)."""

from __future__ import annotations

from typing import Any


def skills_enabled(ctx: Any) -> bool:
    """`ctx` is the tool's ToolContext: skills are on unless its config turns them off."""
    return ctx.config is None or ctx.config.skills.enabled


__all__ = ["skills_enabled"]
