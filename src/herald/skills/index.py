"""What the skills library contributes to a conversation: the index block in the
system prompt's volatile band, and the ``/SKILL-NAME args`` shortcut.

The index is built once, when a session's system prompt is built, and then
frozen with the prompt (DESIGN invariant 1): a skill created or edited during a
session shows in the index from the next session, while `skills_list` and
`skill_view` see it at once.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from herald.skills.skill import Skill

INDEX_HEADING = "## Skills"
INDEX_INSTRUCTION = (
    "Skills are saved procedures. When a task matches one below, load it with "
    "skill_view before acting and follow it; skills_list filters them by tag or category. "
    "Skills created or changed during this session appear in this list from the next "
    "session (skill_view can load them now)."
)
DEFAULT_CATEGORY = "general"
MAX_INDEX_LINES = 200
MAX_INDEX_DESCRIPTION = 60
_SLASH_RE = re.compile(r"/([A-Za-z0-9][A-Za-z0-9_-]*)(?:\s+(.*))?\Z", re.DOTALL)

# Surface commands a skill can never shadow (every surface's built-ins, current and
# planned); a surface passes its own list too.
BUILTIN_SLASH_COMMANDS = frozenset(
    {
        "new", "reset", "help", "stop", "usage", "model", "compress", "steer", "exit",
        "quit", "clear", "retry", "undo", "title", "resume", "sessions", "skills", "status",
        "config", "profile", "approve", "deny", "cancel", "start", "version",
    }
)  # fmt: skip


def _one_line(text: str, limit: int = MAX_INDEX_DESCRIPTION) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def render_index(skills: Sequence[Skill]) -> str:
    """The volatile-band block: a heading, the instruction, then ``- name — description``
    per skill under ``### category`` headings (categories and names sorted, so the same
    library always renders the same bytes). Empty when there are no skills."""
    if not skills:
        return ""
    by_category: dict[str, list[Skill]] = {}
    for skill in skills:
        by_category.setdefault(skill.category, []).append(skill)
    lines = [INDEX_HEADING, INDEX_INSTRUCTION]
    shown = 0
    for category in sorted(by_category):
        lines.append(f"### {category}")
        for skill in sorted(by_category[category], key=lambda s: s.name):
            if shown >= MAX_INDEX_LINES:
                break
            lines.append(f"- {skill.name} — {_one_line(skill.description)}")
            shown += 1
        if shown >= MAX_INDEX_LINES:
            lines.append(f"- … and {len(skills) - shown} more: call skills_list to see them")
            break
    return "\n".join(lines)


def parse_slash(text: str) -> tuple[str, str] | None:
    """(command name lowercased, arguments) for ``/name args``; None otherwise (a path
    such as ``/usr/bin`` is not a command)."""
    match = _SLASH_RE.match(text.strip())
    if match is None:
        return None
    return match.group(1).lower(), (match.group(2) or "").strip()


def slash_prompt(name: str, args: str) -> str:
    if args:
        return f'Load the skill "{name}" with skill_view and then do: {args}'
    return f'Load the skill "{name}" with skill_view and then follow it.'


def is_reserved(command: str, reserved: Iterable[str] = ()) -> bool:
    extra = {r.lower().lstrip("/") for r in reserved}
    return command in BUILTIN_SLASH_COMMANDS or command in extra
