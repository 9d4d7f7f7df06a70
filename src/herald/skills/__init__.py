"""Skills (L2): procedures that worked, kept as plain Markdown the owner can read and edit.

A skill is a directory with ``SKILL.md`` (YAML front matter, then a Markdown
body) and optional ``scripts/``, ``references/`` and ``assets/``. `SkillLibrary`
finds skills in the home, the bundled set and ``skills.external_dirs`` (see
`herald.skills.library` for precedence), renders the system prompt's index and
expands ``/SKILL-NAME args``. `herald.skills.manage` changes home skills
(validated and injection-scanned), `Curator` retires unused agent-created
skills with snapshots and rollback, and `herald.skills.tools` declares the tools
`skills_list`, `skill_view` and `skill_manage` (its ``TOOLS``).
"""

from typing import TYPE_CHECKING

from herald.lazy import lazy_exports

if TYPE_CHECKING:  # for type checkers; at run time each name loads on first use
    from herald.skills.curator import Curator, CuratorReport, RollbackReport
    from herald.skills.index import BUILTIN_SLASH_COMMANDS, render_index
    from herald.skills.library import Shadowed, SkillLibrary, SkillProblem, default_bundled_dir
    from herald.skills.manage import (
        ArchivedSkill,
        ManageResult,
        SkillManageError,
        archive_skill,
        archived_skills,
        create_skill,
        edit_skill,
        patch_skill,
        restore_skill,
        set_pinned,
    )
    from herald.skills.skill import Skill, SkillSource
    from herald.skills.snapshots import Snapshot, SnapshotError
    from herald.skills.usage import SkillUsage, UsageStore, curator_due
    from herald.skills.validation import (
        MAX_DESCRIPTION_CHARS,
        SKILL_FILE,
        SkillMeta,
        SkillValidationError,
        validate_skill_dir,
        validate_skill_text,
    )

_EXPORTS: dict[str, tuple[str, ...]] = {
    "herald.skills.curator": (
        "Curator",
        "CuratorReport",
        "RollbackReport",
    ),
    "herald.skills.index": (
        "BUILTIN_SLASH_COMMANDS",
        "render_index",
    ),
    "herald.skills.library": (
        "Shadowed",
        "SkillLibrary",
        "SkillProblem",
        "default_bundled_dir",
    ),
    "herald.skills.manage": (
        "ArchivedSkill",
        "ManageResult",
        "SkillManageError",
        "archive_skill",
        "archived_skills",
        "create_skill",
        "edit_skill",
        "patch_skill",
        "restore_skill",
        "set_pinned",
    ),
    "herald.skills.skill": (
        "Skill",
        "SkillSource",
    ),
    "herald.skills.snapshots": (
        "Snapshot",
        "SnapshotError",
    ),
    "herald.skills.usage": (
        "SkillUsage",
        "UsageStore",
        "curator_due",
    ),
    "herald.skills.validation": (
        "MAX_DESCRIPTION_CHARS",
        "SKILL_FILE",
        "SkillMeta",
        "SkillValidationError",
        "validate_skill_dir",
        "validate_skill_text",
    ),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "BUILTIN_SLASH_COMMANDS",
    "MAX_DESCRIPTION_CHARS",
    "SKILL_FILE",
    "ArchivedSkill",
    "Curator",
    "CuratorReport",
    "ManageResult",
    "RollbackReport",
    "Shadowed",
    "Skill",
    "SkillLibrary",
    "SkillManageError",
    "SkillMeta",
    "SkillProblem",
    "SkillSource",
    "SkillUsage",
    "SkillValidationError",
    "Snapshot",
    "SnapshotError",
    "UsageStore",
    "archive_skill",
    "archived_skills",
    "create_skill",
    "curator_due",
    "default_bundled_dir",
    "edit_skill",
    "patch_skill",
    "render_index",
    "restore_skill",
    "set_pinned",
    "validate_skill_dir",
    "validate_skill_text",
]
