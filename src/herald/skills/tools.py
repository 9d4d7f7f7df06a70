"""The skill tools: `skills_list`, `skill_view` and `skill_manage` (toolset ``core``).

Progressive disclosure: the system prompt carries one line per skill; the model
loads a whole skill with `skill_view` when a task matches. These tools are live
— a skill created earlier in the session is listed and viewable at once —
while the prompt's index stays frozen for the session (DESIGN invariant 1).

Handlers find the library through ``ctx.home`` and ``ctx.config``; one library
is cached per (home, config) and re-scans itself when files change.
"""

from __future__ import annotations

import json
import threading
from typing import TYPE_CHECKING, Any

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
from herald.tools.declare import tool
from herald.tools.registry import ToolArgumentError, ToolContext, ToolRegistry, ToolSpec

if TYPE_CHECKING:
    from herald.skills.library import Skill

MAX_VIEW_BYTES = 200_000
MAX_RESULT_CHARS = 400_000  # above MAX_VIEW_BYTES + JSON escaping: a view is never cut
ACTIONS = ("create", "patch", "edit", "archive")
READ_ONLY_SURFACES = frozenset({"webhook"})

SKILLS_LIST_SCHEMA: dict[str, Any] = {
    "description": (
        "List the available skills (saved procedures), optionally filtered by tag or "
        "category. Load one with skill_view before acting on a matching task."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "tag": {"type": "string", "description": "only skills with this tag"},
            "category": {"type": "string", "description": "only skills in this category"},
        },
    },
}

SKILL_VIEW_SCHEMA: dict[str, Any] = {
    "description": (
        "Load a skill: its whole SKILL.md, or one named file under the skill (e.g. "
        "references/x.md, listed in `files`). Read it fully, then follow it."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "the skill's name"},
            "file": {
                "type": "string",
                "description": "a file relative to the skill directory; omit for SKILL.md",
            },
        },
        "required": ["name"],
    },
}

SKILL_MANAGE_SCHEMA: dict[str, Any] = {
    "description": (
        "Create or maintain a skill in the owner's library after a procedure worked. "
        "create: content is the whole SKILL.md (front matter with name, a description of "
        "at most 60 characters, version; then a Markdown body). patch: replace old_text "
        "(must match exactly once) with new_text. edit: replace the whole SKILL.md with "
        "content. archive: retire the skill (restorable). Changes show in the skills index "
        "from the next session."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": list(ACTIONS)},
            "name": {"type": "string", "description": "the skill's name (its directory name)"},
            "content": {"type": "string", "description": "the whole SKILL.md text"},
            "old_text": {"type": "string", "description": "patch: exact text to replace"},
            "new_text": {"type": "string", "description": "patch: replacement text"},
        },
        "required": ["action", "name"],
    },
}

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


def _require_name(args: dict[str, Any]) -> str:
    name = args.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ToolArgumentError("name is required: a skill name from skills_list")
    return name.strip().lower()


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


def handle_skills_list(args: dict[str, Any], ctx: ToolContext) -> str:
    library = library_for(ctx)
    tag = args.get("tag") if isinstance(args.get("tag"), str) else None
    category = args.get("category") if isinstance(args.get("category"), str) else None
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


def handle_skill_view(args: dict[str, Any], ctx: ToolContext) -> str:
    library = library_for(ctx)
    skill = _find(library, _require_name(args))
    relative = args.get("file")
    if relative is not None and not isinstance(relative, str):
        raise ToolArgumentError("file must be a path relative to the skill, e.g. references/x.md")
    relative = (relative or "").strip() or SKILL_FILE
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


def handle_skill_manage(args: dict[str, Any], ctx: ToolContext) -> str:
    if ctx.surface in READ_ONLY_SURFACES:
        # A webhook's text comes from outside; letting it write skills would let a
        # stranger plant instructions in every later session.
        raise ToolArgumentError(
            f"skill_manage is not available on the {ctx.surface} surface (its input is "
            "untrusted); skills can be read here but not changed"
        )
    library = library_for(ctx)
    action = args.get("action")
    if action not in ACTIONS:
        raise ToolArgumentError(f"action must be one of {', '.join(ACTIONS)}, got {action!r}")
    name = args.get("name")
    try:
        if action == "create":
            result = create_skill(library, name, args.get("content"), created_by="agent")
        elif action == "patch":
            result = patch_skill(library, name, args.get("old_text"), args.get("new_text"))
        elif action == "edit":
            result = edit_skill(library, name, args.get("content"))
        else:
            result = archive_skill(library, name)
    except SkillManageError as exc:
        raise ToolArgumentError(str(exc)) from None
    return json.dumps(result.to_dict(), ensure_ascii=False)


def skills_enabled(ctx: ToolContext) -> bool:
    return ctx.config is None or ctx.config.skills.enabled


# Declared once, as values; the composition root (herald.toolbox) adds them.
TOOLS: tuple[ToolSpec, ...] = (
    tool(
        name="skills_list",
        toolset="core",
        schema=SKILLS_LIST_SCHEMA,
        check=skills_enabled,
        parallel_safe=True,
    )(lambda ctx, **args: handle_skills_list(args, ctx)),
    tool(
        name="skill_view",
        toolset="core",
        schema=SKILL_VIEW_SCHEMA,
        check=skills_enabled,
        parallel_safe=True,
        max_result_chars=MAX_RESULT_CHARS,
    )(lambda ctx, **args: handle_skill_view(args, ctx)),
    tool(name="skill_manage", toolset="core", schema=SKILL_MANAGE_SCHEMA, check=skills_enabled)(
        lambda ctx, **args: handle_skill_manage(args, ctx)
    ),
)


def register(target: ToolRegistry) -> None:
    """Add these tools to `target` (tests build small registries this way)."""
    target.add(*TOOLS)
