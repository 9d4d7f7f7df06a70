"""The skill tools: `skills_list`, `skill_view` and `skill_manage` (toolset ``core``).

Progressive disclosure: the system prompt carries one line per skill; the model
loads a whole skill with `skill_view` when a task matches. These tools are live
— a skill created earlier in the session is listed and viewable at once —
while the prompt's index stays frozen for the session (DESIGN invariant 1).

The tools find the library through ``ctx.home`` and ``ctx.config``; one library
is cached per (home, config) and re-scans itself when files change.
"""

from __future__ import annotations

import json
import threading
from typing import TYPE_CHECKING, Any, Literal

from herald.skills.availability import skills_enabled
from herald.skills.files import UnsafePathError, list_files, resolve_inside
from herald.skills.library import SkillLibrary
from herald.skills.manage import (
    SkillManageError,
    archive_skill,
    create_skill,
    edit_skill,
    patch_skill,
)
from herald.skills.validation import SKILL_FILE
from herald.tools.consequence import actions
from herald.tools.declare import tool
from herald.tools.registry import ToolArgumentError, ToolContext, ToolRegistry, ToolSpec

if TYPE_CHECKING:
    from herald.skills.library import Skill

MAX_VIEW_BYTES = 200_000
MAX_RESULT_CHARS = 400_000  # above MAX_VIEW_BYTES + JSON escaping: a view is never cut
READ_ONLY_SURFACES = frozenset({"webhook"})

_libraries: dict[tuple[str, str], SkillLibrary] = {}
_libraries_lock = threading.Lock()


def library_for(ctx: ToolContext) -> SkillLibrary:
    """The cached library of the context's home (one per home and config)."""
    if ctx.home is None:
        raise ToolArgumentError("skills need a Herald home, and this session has none")
    fingerprint = ctx.config.fingerprint() if ctx.config is not None else "-"
    key = (str(ctx.home.root), fingerprint)
    with _libraries_lock:
        library = _libraries.get(key)
        if library is None:
            library = SkillLibrary(ctx.home, ctx.config)
            _libraries[key] = library
    return library


def clear_library_cache() -> None:
    with _libraries_lock:
        _libraries.clear()


def _entry(skill: Skill) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": skill.name,
        "description": skill.description,
        "category": skill.category,
        "tags": list(skill.tags),
        "source": skill.source,
    }
    if skill.state != "active":
        entry["state"] = skill.state
    return entry


@tool(toolset="core", check=skills_enabled, parallel_safe=True)
def skills_list(ctx: ToolContext, tag: str | None = None, category: str | None = None) -> str:
    """List the available skills (saved procedures), optionally filtered by tag or
    category. Load one with skill_view before acting on a matching task.

    Args:
        tag: only skills with this tag
        category: only skills in this category
    """
    library = library_for(ctx)
    skills = library.filter(tag=tag or None, category=category or None)
    result: dict[str, Any] = {"skills": [_entry(s) for s in skills], "count": len(skills)}
    if not skills:
        result["categories"] = library.categories()
        result["note"] = (
            "no skill matches; try another tag or category, or list all without filters"
            if tag or category
            else "there are no skills yet"
        )
    return json.dumps(result, ensure_ascii=False)


def _find(library: SkillLibrary, name: str) -> Skill:
    skill = library.get(name)
    if skill is not None:
        return skill
    other = library.get(name, include_unavailable=True)
    if other is not None:
        raise ToolArgumentError(
            f"skill {name!r} is for {', '.join(other.platforms)} only, not {library.platform}"
        )
    known = ", ".join(s.name for s in library.skills()[:40]) or "none"
    raise ToolArgumentError(f"no skill named {name!r}; available skills: {known}")


def _read_skill_file(skill: Skill, relative: str) -> str:
    from herald.safety import scan_text

    try:
        path = resolve_inside(skill.path, relative)
    except UnsafePathError as exc:
        raise ToolArgumentError(f"{exc}; files of {skill.name}: {_files_hint(skill)}") from None
    if not path.is_file():
        raise ToolArgumentError(
            f"{skill.name} has no file {relative!r}; its files: {_files_hint(skill)}"
        )
    size = path.stat().st_size
    if size > MAX_VIEW_BYTES:
        raise ToolArgumentError(
            f"{relative} is {size:,} bytes, more than skill_view loads ({MAX_VIEW_BYTES:,}); "
            "read the part you need with a file tool"
        )
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ToolArgumentError(
            f"{relative} is not text (a binary asset); use it from a script instead of reading it"
        ) from None
    if skill.source != "bundled":
        scan = scan_text(text, kind="skill")
        if scan.blocked:
            raise ToolArgumentError(
                f"{skill.name}/{relative} was refused by the injection scanner: "
                + "; ".join(scan.reasons)
            )
    return text


def _files_hint(skill: Skill) -> str:
    files = list_files(skill.path)
    return ", ".join(files[:30]) or "none besides SKILL.md"


@tool(toolset="core", check=skills_enabled, parallel_safe=True, max_result_chars=MAX_RESULT_CHARS)
def skill_view(ctx: ToolContext, name: str, file: str | None = None) -> str:
    """Load a skill: its whole SKILL.md, or one named file under the skill (e.g.
    references/x.md, listed in `files`). Read it fully, then follow it.

    Args:
        name: the skill's name
        file: a file relative to the skill directory; omit for SKILL.md
    """
    library = library_for(ctx)
    wanted = name.strip().lower()
    if not wanted:
        raise ToolArgumentError("name is required: a skill name from skills_list")
    skill = _find(library, wanted)
    relative = (file or "").strip() or SKILL_FILE
    if relative in (SKILL_FILE, f"./{SKILL_FILE}"):
        relative = SKILL_FILE
    content = _read_skill_file(skill, relative)
    library.record(skill.name, "view")
    result: dict[str, Any] = {
        "name": skill.name,
        "source": skill.source,
        "file": relative,
        "content": content,
    }
    if relative == SKILL_FILE:
        result["files"] = list(list_files(skill.path))
        if skill.related_skills:
            result["related_skills"] = list(skill.related_skills)
    return json.dumps(result, ensure_ascii=False)


@tool(
    toolset="core",
    check=skills_enabled,
    controls=("content", "new_text"),
    consequential=True,
    consequence=actions("create", "patch", "edit"),
    attributed=("content", "new_text"),
)
def skill_manage(
    ctx: ToolContext,
    action: Literal["create", "patch", "edit", "archive"],
    name: str,
    content: str | None = None,
    old_text: str | None = None,
    new_text: str | None = None,
) -> str:
    """Create or maintain a skill in the owner's library after a procedure worked.
    create: content is the whole SKILL.md (front matter with name, a description of
    at most 60 characters, version; then a Markdown body). patch: replace old_text
    (must match exactly once) with new_text. edit: replace the whole SKILL.md with
    content. archive: retire the skill (restorable). Changes show in the skills index
    from the next session.

    Args:
        name: the skill's name (its directory name)
        content: the whole SKILL.md text
        old_text: patch: exact text to replace
        new_text: patch: replacement text
    """
    if ctx.surface in READ_ONLY_SURFACES:
        # A webhook's text comes from outside; letting it write skills would let a
        # stranger plant instructions in every later session.
        raise ToolArgumentError(
            f"skill_manage is not available on the {ctx.surface} surface (its input is "
            "untrusted); skills can be read here but not changed"
        )
    library = library_for(ctx)
    # Which of content / old_text / new_text an action needs is checked by the
    # manage functions, whose errors name the action and what to send.
    try:
        if action == "create":
            result = create_skill(library, name, content, created_by="agent")
        elif action == "patch":
            result = patch_skill(library, name, old_text, new_text)
        elif action == "edit":
            result = edit_skill(library, name, content)
        else:
            result = archive_skill(library, name)
    except SkillManageError as exc:
        raise ToolArgumentError(str(exc)) from None
    return json.dumps(result.to_dict(), ensure_ascii=False)


# Declared once, as values; the composition root (herald.toolbox) adds them.
TOOLS: tuple[ToolSpec, ...] = (skills_list, skill_view, skill_manage)


def register(target: ToolRegistry) -> None:
    """Add these tools to `target` (tests build small registries this way)."""
    target.add(*TOOLS)
