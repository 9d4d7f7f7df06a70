"""Changing home skills: create, patch, edit, archive, restore and pin.

Every write is validated (strict rules) and scanned with
``scan_text(kind="skill")`` before it touches the disk, then written atomically
under the library lock. Only home skills change: bundled and external skills
are read-only, and the error says how to customise one (create a home skill of
the same name, which takes precedence). ``created_by`` is Herald's record of
authorship: a create through the tools sets ``created_by: agent``, and a patch
or edit keeps whatever the skill had, so the agent can neither disown a skill
it wrote (the curator only retires agent-created skills) nor claim the owner's.
Archiving moves a skill to ``skills/.archive/<name>-<UTC timestamp>/``; nothing
is ever deleted.
"""

from __future__ import annotations

import re
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from herald.config.shared_file import SharedFileConflict, atomic_write, update_shared_file
from herald.skills.files import LOCK_TIMEOUT_SECONDS, library_lock
from herald.skills.validation import (
    MAX_NAME_CHARS,
    NAME_RE,
    SKILL_FILE,
    SkillValidationError,
    set_created_by,
    split_front_matter,
    validate_skill_text,
)

if TYPE_CHECKING:
    from herald.skills.library import SkillLibrary

ARCHIVE_DIR = ".archive"
_ARCHIVED_RE = re.compile(r"^(?P<name>.+)-(?P<stamp>\d{8}T\d{6}Z)(?:-(?P<n>\d+))?$")
NEXT_SESSION_NOTE = (
    "It shows in the system prompt's skills index from the next session; skill_view and "
    "skills_list see it now."
)


class SkillManageError(ValueError):
    """A skill change that was refused; the message says why and what to do instead."""


@dataclass(frozen=True)
class ManageResult:
    action: str
    name: str
    path: Path
    message: str
    warnings: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "ok": True,
            "action": self.action,
            "name": self.name,
            "path": str(self.path),
            "message": self.message,
        }
        if self.warnings:
            out["warnings"] = list(self.warnings)
        return out


@dataclass(frozen=True)
class ArchivedSkill:
    name: str
    path: Path
    archived_at: str  # the UTC timestamp in the directory name


def check_name(name: Any) -> str:
    if not isinstance(name, str) or not name.strip():
        raise SkillManageError("name is required (the skill's directory name, e.g. 'my-skill')")
    name = name.strip()
    if len(name) > MAX_NAME_CHARS or not NAME_RE.match(name):
        raise SkillManageError(
            f"{name!r} is not a valid skill name: use 1-{MAX_NAME_CHARS} lowercase letters, "
            "digits, '-' or '_', starting and ending with a letter or digit"
        )
    return name


def check_text(text: str, name: str) -> tuple[str, ...]:
    """Validate and scan a SKILL.md about to be written; returns validation warnings."""
    from herald.safety import scan_text

    try:
        meta, _ = validate_skill_text(text, dir_name=name, strict=True)
    except SkillValidationError as exc:
        raise SkillManageError(f"the skill is not valid, nothing was written: {exc}") from None
    scan = scan_text(text, kind="skill")
    if scan.blocked:
        raise SkillManageError(
            "refused: the skill text was blocked by the injection scanner ("
            + "; ".join(scan.reasons)
            + "). Nothing was written; a skill must not carry instructions like these."
        )
    return meta.warnings


def created_by_of(text: str) -> str | None:
    """The ``created_by`` a SKILL.md declares (None when absent or unreadable)."""
    try:
        front, _, _ = split_front_matter(text)
        data = yaml.safe_load(front) or {}
    except (SkillValidationError, yaml.YAMLError):
        return None
    value = data.get("created_by") if isinstance(data, dict) else None
    return str(value).strip() if value is not None else None


def _read_only_error(library: SkillLibrary, name: str) -> SkillManageError:
    skill = library.get(name, include_unavailable=True)
    if skill is not None and skill.read_only:
        return SkillManageError(
            f"{name!r} is a {skill.source} skill and cannot be modified. To customise it, "
            "create a home skill with the same name (skill_manage action=create with the whole "
            "edited SKILL.md); a home skill takes precedence over the "
            f"{skill.source} one."
        )
    return SkillManageError(f"no home skill named {name!r}; skills_list shows the available skills")


def _home_skill_file(library: SkillLibrary, name: str) -> Path:
    skill_dir = library.home_dir_of(name)
    if skill_dir is None:
        raise _read_only_error(library, name)
    return skill_dir / SKILL_FILE


def _rewrite(
    library: SkillLibrary, name: str, path: Path, change: Callable[[str], str]
) -> tuple[str, tuple[str, ...]]:
    """Apply `change` to SKILL.md as it is under the lock, check the result (`check_text`
    raises for an invalid or unsafe skill) and write it; returns it and its warnings.

    The read happens under the lock and the write is a compare-and-swap
    (`update_shared_file`), so a patch from another process (the background reviewer,
    another session) landing meanwhile is patched on top of, never overwritten.
    """

    def transform(current: str | None) -> tuple[str, tuple[str, tuple[str, ...]]]:
        if current is None:
            raise SkillManageError(f"{name}/SKILL.md was removed meanwhile")
        text = change(current)
        return text, (text, check_text(text, name))

    try:
        with library_lock(library.skills_dir):
            written = update_shared_file(path, transform, timeout=LOCK_TIMEOUT_SECONDS)
    except UnicodeDecodeError as exc:
        raise SkillManageError(
            f"{name}/SKILL.md is not UTF-8 text (byte {exc.start}); save it as UTF-8"
        ) from None
    except (OSError, SharedFileConflict) as exc:  # lock timeouts are OSErrors too
        raise SkillManageError(f"could not write {name}/SKILL.md: {exc}") from None
    library.refresh(force=True)
    return written


def create_skill(
    library: SkillLibrary, name: Any, content: Any, *, created_by: str | None = "agent"
) -> ManageResult:
    """A new home skill ``skills/<name>/SKILL.md`` from the whole SKILL.md text."""
    name = check_name(name)
    if not isinstance(content, str) or not content.strip():
        raise SkillManageError(
            "content is required for create: the whole SKILL.md text (front matter with name, "
            "description, version, then the Markdown body)"
        )
    if library.home_dir_of(name) is not None or (library.skills_dir / name).exists():
        raise SkillManageError(
            f"a home skill named {name!r} already exists; use action=patch or action=edit"
        )
    try:
        text = set_created_by(content, created_by) if created_by else content
    except SkillValidationError as exc:
        raise SkillManageError(f"the skill is not valid, nothing was written: {exc}") from None
    warnings = check_text(text, name)
    shadowed = library.get(name, include_unavailable=True)
    path = library.skills_dir / name / SKILL_FILE
    with library_lock(library.skills_dir):
        if path.parent.exists():
            raise SkillManageError(f"a home skill named {name!r} was just created; use patch")
        path.parent.mkdir(parents=True)
        atomic_write(path, text)
    library.refresh(force=True)
    library.record(name, "create")
    note = (
        f" It takes precedence over the {shadowed.source} skill of that name." if shadowed else ""
    )
    return ManageResult(
        "create", name, path, f"Created skill {name!r}.{note} {NEXT_SESSION_NOTE}", warnings
    )


def patch_skill(library: SkillLibrary, name: Any, old_text: Any, new_text: Any) -> ManageResult:
    """Replace the one occurrence of `old_text` in a home skill's SKILL.md."""
    name = check_name(name)
    if not isinstance(old_text, str) or not old_text:
        raise SkillManageError("old_text is required for patch: the exact text to replace")
    if not isinstance(new_text, str):
        raise SkillManageError("new_text is required for patch (it may be empty to delete)")
    path = _home_skill_file(library, name)

    def patch(current: str) -> str:
        count = current.count(old_text)
        if count == 0:
            raise SkillManageError(
                f"old_text was not found in {name}/SKILL.md; load it with skill_view and copy "
                "the exact text (whitespace included)"
            )
        if count > 1:
            raise SkillManageError(
                f"old_text occurs {count} times in {name}/SKILL.md; include more surrounding "
                "text so it matches exactly once"
            )
        return _keep_author(current, current.replace(old_text, new_text, 1))

    _, warnings = _rewrite(library, name, path, patch)
    library.record(name, "patch")
    return ManageResult(
        "patch", name, path, f"Patched skill {name!r}. {NEXT_SESSION_NOTE}", warnings
    )


def edit_skill(library: SkillLibrary, name: Any, content: Any) -> ManageResult:
    """Replace a home skill's SKILL.md with `content` (the whole new text)."""
    name = check_name(name)
    if not isinstance(content, str) or not content.strip():
        raise SkillManageError("content is required for edit: the whole new SKILL.md text")
    path = _home_skill_file(library, name)
    _, warnings = _rewrite(library, name, path, lambda current: _keep_author(current, content))
    library.record(name, "patch")
    return ManageResult(
        "edit", name, path, f"Rewrote skill {name!r}. {NEXT_SESSION_NOTE}", warnings
    )


def _keep_author(before: str, after: str) -> str:
    original = created_by_of(before)
    if created_by_of(after) == original:
        return after
    try:
        return set_created_by(after, original)
    except SkillValidationError as exc:
        raise SkillManageError(f"the skill is not valid, nothing was written: {exc}") from None


def _stamp(clock_value: float) -> str:
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(clock_value))


def archive_skill(library: SkillLibrary, name: Any) -> ManageResult:
    """Move a home skill to ``skills/.archive/<name>-<timestamp>/`` (restorable)."""
    name = check_name(name)
    skill_dir = library.home_dir_of(name)
    if skill_dir is None:
        raise _read_only_error(library, name)
    target = move_to_archive(library, skill_dir, name)
    return ManageResult(
        "archive",
        name,
        target,
        f"Archived skill {name!r} to {target}; `herald skills restore {name}` brings it back.",
    )


def move_to_archive(library: SkillLibrary, skill_dir: Path, name: str) -> Path:
    archive = library.skills_dir / ARCHIVE_DIR
    base = f"{name}-{_stamp(library.clock())}"
    with library_lock(library.skills_dir):
        archive.mkdir(parents=True, exist_ok=True)
        target = archive / base
        n = 1
        while target.exists():
            n += 1
            target = archive / f"{base}-{n}"
        shutil.move(str(skill_dir), str(target))
    library.refresh(force=True)
    return target


def archived_skills(library: SkillLibrary) -> list[ArchivedSkill]:
    """Archived skills, oldest first."""
    archive = library.skills_dir / ARCHIVE_DIR
    if not archive.is_dir():
        return []
    out: list[ArchivedSkill] = []
    for entry in archive.iterdir():
        match = _ARCHIVED_RE.match(entry.name)
        if entry.is_dir() and match:
            out.append(ArchivedSkill(match.group("name"), entry, match.group("stamp")))
    return sorted(out, key=lambda a: (a.archived_at, a.path.name))


def restore_skill(library: SkillLibrary, name: Any) -> ManageResult:
    """Move the newest archived copy of `name` (or the archive directory called `name`)
    back to ``skills/<name>/``; it counts as active from now on."""
    if not isinstance(name, str) or not name.strip():
        raise SkillManageError("name the skill to restore")
    wanted = name.strip()
    archived = archived_skills(library)
    matches = [a for a in archived if a.path.name == wanted] or [
        a for a in archived if a.name == wanted
    ]
    if not matches:
        known = ", ".join(sorted({a.name for a in archived})) or "none"
        raise SkillManageError(f"no archived skill {wanted!r}; archived skills: {known}")
    chosen = matches[-1]
    target = library.skills_dir / chosen.name
    with library_lock(library.skills_dir):
        if target.exists():
            raise SkillManageError(
                f"a home skill {chosen.name!r} exists already; archive or rename it first"
            )
        shutil.move(str(chosen.path), str(target))
    library.refresh(force=True)
    library.usage.touch([chosen.name])
    return ManageResult(
        "restore", chosen.name, target, f"Restored skill {chosen.name!r} from {chosen.path.name}."
    )


def set_pinned(library: SkillLibrary, name: Any, pinned: bool) -> ManageResult:
    """Pin (exempt from the curator) or unpin a home skill."""
    name = check_name(name)
    skill_dir = library.home_dir_of(name)
    if skill_dir is None:
        skill = library.get(name, include_unavailable=True)
        if skill is not None:
            raise SkillManageError(
                f"{name!r} is a {skill.source} skill; the curator never touches those, so "
                "there is nothing to pin"
            )
        raise SkillManageError(f"no home skill named {name!r}")
    library.usage.set_pinned(name, pinned)
    verb = "Pinned" if pinned else "Unpinned"
    return ManageResult("pin" if pinned else "unpin", name, skill_dir, f"{verb} skill {name!r}.")
