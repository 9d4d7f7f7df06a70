"""Memories and skills of a hermes home → Herald's.

Memory entries go through Herald's own memory write (`BuiltinMemory.add`): the same
injection scan, de-duplication and size limit as a `memory` tool call, so an injected
entry in a hostile MEMORY.md is refused exactly as the model's would be. Skills are
validated as Herald validates its own, scanned (``kind="skill"``), and copied file by
file (regular files only, no symlinks, bounded sizes) into ``<home>/skills/<name>/``;
an invalid skill is a line in the summary saying why, never a silent drop.
"""

from __future__ import annotations

import os

from herald.importers.hermes.items import Run
from herald.importers.hermes.reader import MAX_SKILL_FILES, UnsafeSource

_MEMORY_FILES = (("memory", "memories/MEMORY.md"), ("user", "memories/USER.md"))


def import_memories(run: Run) -> None:
    from herald.memory import BuiltinMemory
    from herald.memory.entries import check_entry, normalized, parse_entries

    for target, rel in _MEMORY_FILES:
        try:
            entries = parse_entries(run.source.read_text(rel))
        except FileNotFoundError:
            continue
        except (OSError, UnsafeSource) as exc:
            run.add("memory", rel, "skip", f"unreadable: {exc}")
            continue
        for entry in entries:
            label = f"{rel}: {entry[:60]!r}" if len(entry) <= 60 else f"{rel}: {entry[:57]!r}…"
            memory = BuiltinMemory(run.settings.home, run.settings.config.memory)
            have = {normalized(e) for e in memory.entries(target)}
            if normalized(entry) in have:
                run.add("memory", label, "already")
                continue
            check = check_entry(entry)
            if check.blocked:
                # the reason names categories only, so the summary cannot re-inject it
                run.add("memory", f"{rel}: an entry", "skip",
                        f"blocked by the injection scan: {', '.join(check.categories)}")  # fmt: skip
                continue
            if run.dry_run:
                run.add("memory", label, "import")
                continue
            result = memory.add(target, entry)
            if result.success:
                run.add("memory", label, "import")
            else:
                run.add("memory", label, "skip", result.message or "refused")


def _skill_dirs(run: Run) -> list[tuple[str, str]]:
    """(relative folder, kind) of every folder under skills/ holding a SKILL.md, one
    category level deep (hermes keeps skills/<category>/<name>/ too)."""
    found: list[tuple[str, str]] = []
    for name, kind in run.source.listdir("skills"):
        if name.startswith("."):
            continue
        rel = f"skills/{name}"
        if kind != "dir":
            found.append((rel, kind))
            continue
        children = run.source.listdir(rel)
        if any(child == "SKILL.md" for child, _ in children):
            found.append((rel, "dir"))
            continue
        nested = [(f"{rel}/{c}", k) for c, k in children
                  if k == "symlink" or (k == "dir" and run.source.listdir(f"{rel}/{c}"))]  # fmt: skip
        found += nested or [(rel, "dir")]  # a folder without SKILL.md is reported, not dropped
    return found


def _strict_text(text: str, name: str) -> tuple[str, str]:
    """(the SKILL.md Herald will keep, a note): hermes skills carry no version, which
    Herald's library requires, so one is added when that is all that is missing."""
    from herald.skills.validation import SkillValidationError, validate_skill_text

    try:
        validate_skill_text(text, dir_name=name, strict=True)
        return text, ""
    except SkillValidationError:
        validate_skill_text(text, dir_name=name, strict=False)  # raises what is really wrong
    patched = text.replace("---\n", "---\nversion: 1.0.0\n", 1)
    validate_skill_text(patched, dir_name=name, strict=True)
    return patched, "version: 1.0.0 added"


def _skill_files(run: Run, rel: str) -> list[str]:
    files: list[str] = []
    stack = [rel]
    while stack:
        folder = stack.pop()
        for name, kind in run.source.listdir(folder):
            path = f"{folder}/{name}"
            if kind == "dir":
                stack.append(path)
            elif kind == "file":
                files.append(path)
            else:
                raise UnsafeSource(f"{path}: a {kind} (skills are copied without links)")
            if len(files) > MAX_SKILL_FILES:
                raise UnsafeSource(f"{rel}: more than {MAX_SKILL_FILES} files")
    return sorted(files)


def import_skills(run: Run) -> None:
    from herald.safety import scan_text
    from herald.skills.validation import SkillValidationError

    skills_dir = run.settings.home.skills_dir
    for rel, kind in _skill_dirs(run):
        name = rel.rsplit("/", 1)[-1]
        if kind != "dir":
            run.add("skills", rel, "skip", f"a {kind}, not a skill folder (links are not followed)")
            continue
        try:
            original = run.source.read_text(f"{rel}/SKILL.md")
            text, note = _strict_text(original, name)
            files = _skill_files(run, rel)
        except SkillValidationError as exc:
            run.add("skills", rel, "skip", "invalid: " + "; ".join(exc.problems))
            continue
        except (OSError, UnsafeSource) as exc:
            run.add("skills", rel, "skip", str(exc))
            continue
        blocked = [f for f in files if f.endswith(".md") and
                   scan_text(run.source.read_text(f), kind="skill").blocked]  # fmt: skip
        if blocked:
            run.add("skills", rel, "skip", f"the injection scan flagged {blocked[0]}")
            continue
        target = skills_dir / name
        if (target / "SKILL.md").exists():
            same = (target / "SKILL.md").read_text(encoding="utf-8") == text
            run.add("skills", name, "already" if same else "skip",
                    "" if same else "Herald has a skill of that name (kept)")  # fmt: skip
            continue
        if not run.dry_run:
            _copy_skill(run, rel, files, target, text)
        run.add("skills", name, "import", note)


def _copy_skill(run: Run, rel: str, files: list[str], target, skill_text: str) -> None:
    from herald.homes.layout import open_inside

    staging = target.with_name(f".{target.name}.import-{os.getpid()}")
    staging.mkdir(parents=True)
    for path in files:
        data = skill_text.encode() if path == f"{rel}/SKILL.md" else run.source.read_bytes(path)
        fd = open_inside(staging, path[len(rel) + 1 :], os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        with os.fdopen(fd, "wb") as out:
            out.write(data)
    os.rename(staging, target)
