"""Parsing and validating `SKILL.md`: YAML front matter between ``---`` lines, then a
Markdown body.

Required: ``name`` (lowercase letters, digits, ``-`` and ``_``; equal to the
skill's directory name), ``description`` (one line, at most 60 characters) and
``version``. Optional: ``platforms`` (linux, macos, windows), ``metadata.herald.tags``,
``metadata.herald.category``, ``related_skills``, ``author``, ``license``,
``created_by``. Unknown fields are kept and ignored, so SKILL.md directories
written for other agents still load.

Strict mode (bundled and home skills) enforces every rule. Lenient mode
(external directories, which Herald may not edit) turns the two rules other
agents commonly break — a longer description, no ``version`` — into warnings.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

SKILL_FILE = "SKILL.md"
MAX_DESCRIPTION_CHARS = 60
MAX_NAME_CHARS = 64
MAX_SKILL_BYTES = 200_000
NAME_RE = re.compile(r"^[a-z0-9](?:[a-z0-9_-]{0,62}[a-z0-9])?$")
PLATFORM_ALIASES = {
    "linux": "linux",
    "macos": "macos",
    "darwin": "macos",
    "osx": "macos",
    "mac": "macos",
    "windows": "windows",
    "win32": "windows",
    "win": "windows",
}
_FENCE = "---"
_FENCE_END = ("---", "...")


class SkillValidationError(ValueError):
    """A SKILL.md that cannot be used. The message says what is wrong, where, and how
    to fix it; `problems` holds one line per problem."""

    def __init__(self, problems: list[str], *, path: Path | str | None = None):
        self.problems = list(problems)
        self.path = Path(path) if path is not None else None
        where = f"{self.path}: " if self.path is not None else ""
        if len(self.problems) == 1:
            message = f"{where}{self.problems[0]}"
        else:
            message = f"{where}{len(self.problems)} problems:\n" + "\n".join(
                f"- {p}" for p in self.problems
            )
        super().__init__(message)


@dataclass(frozen=True)
class SkillMeta:
    """The front matter of one SKILL.md, normalised."""

    name: str
    description: str
    version: str
    platforms: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    category: str | None = None
    related_skills: tuple[str, ...] = ()
    author: str | None = None
    license: str | None = None
    created_by: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # unknown fields, kept as parsed
    warnings: tuple[str, ...] = ()


def split_front_matter(text: str) -> tuple[str, str, int]:
    """(front matter YAML, body, line number of the first body line). Raises
    SkillValidationError when the file does not open with a ``---`` block."""
    text = text.removeprefix("\ufeff")
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != _FENCE:
        raise SkillValidationError(
            [
                "line 1: SKILL.md must start with YAML front matter: a line '---', the fields "
                "(name, description, version), then a closing '---' line"
            ]
        )
    for index in range(1, len(lines)):
        if lines[index].strip() in _FENCE_END:
            return "".join(lines[1:index]), "".join(lines[index + 1 :]), index + 2
    raise SkillValidationError(
        ["line 1: the front matter opened with '---' is never closed; add a '---' line after it"]
    )


def _load_yaml(front: str) -> dict[str, Any]:
    try:
        data = yaml.safe_load(front) if front.strip() else {}
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        # +2: the YAML starts on line 2 of the file, marks count from 0.
        where = f"line {mark.line + 2}" if mark is not None else "front matter"
        problem = exc.problem or exc.context or "invalid YAML"
        raise SkillValidationError(
            [
                f"{where}: bad YAML in the front matter ({problem}); check the indentation "
                "and quote values that contain ': ' or start with a special character"
            ]
        ) from None
    except yaml.YAMLError as exc:
        raise SkillValidationError([f"front matter: bad YAML ({exc})"]) from None
    if not isinstance(data, dict):
        raise SkillValidationError(
            [
                "front matter: expected 'key: value' fields (a YAML mapping), got "
                f"{type(data).__name__}"
            ]
        )
    return data


def _string_list(value: Any, field_name: str, problems: list[str]) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(v.strip() for v in value.split(",") if v.strip())
    if isinstance(value, list) and all(isinstance(v, str | int | float) for v in value):
        return tuple(str(v).strip() for v in value if str(v).strip())
    problems.append(f"{field_name}: expected a list of strings, e.g. {field_name}: [a, b]")
    return ()


def _optional_str(value: Any, field_name: str, problems: list[str]) -> str | None:
    if value is None:
        return None
    if isinstance(value, str | int | float):
        return str(value).strip() or None
    problems.append(f"{field_name}: expected a string")
    return None


def _check_name(data: dict[str, Any], dir_name: str | None, problems: list[str]) -> str:
    name = data.get("name")
    if name is None or (isinstance(name, str) and not name.strip()):
        problems.append("name: missing; add 'name: my-skill' (the skill's directory name)")
        return dir_name or ""
    if not isinstance(name, str):
        problems.append("name: must be a string such as 'my-skill'")
        return dir_name or ""
    name = name.strip()
    if len(name) > MAX_NAME_CHARS or not NAME_RE.match(name):
        problems.append(
            f"name: {name!r} is not a valid skill name; use 1-{MAX_NAME_CHARS} lowercase "
            "letters, digits, '-' or '_', starting and ending with a letter or digit"
        )
    if dir_name is not None and name != dir_name:
        problems.append(
            f"name: {name!r} does not match the directory {dir_name!r}; rename the directory "
            "or change the name so they are equal"
        )
    return name


def _check_description(
    data: dict[str, Any], strict: bool, problems: list[str], warnings: list[str]
) -> str:
    description = data.get("description")
    if description is None or (isinstance(description, str) and not description.strip()):
        problems.append(
            "description: missing; add one sentence of at most "
            f"{MAX_DESCRIPTION_CHARS} characters saying when to use the skill"
        )
        return ""
    if not isinstance(description, str):
        problems.append("description: must be a string (one sentence)")
        return ""
    description = " ".join(description.split())
    if len(description) > MAX_DESCRIPTION_CHARS:
        message = (
            f"description: {len(description)} characters, the limit is "
            f"{MAX_DESCRIPTION_CHARS}; shorten it to one short sentence"
        )
        (problems if strict else warnings).append(message)
    elif strict and "\n" in data["description"].strip():
        problems.append("description: must be a single line")
    return description


def _check_version(
    data: dict[str, Any],
    metadata: dict[str, Any],
    strict: bool,
    problems: list[str],
    warnings: list[str],
) -> str:
    version = data.get("version", metadata.get("version"))
    if version is None or (isinstance(version, str) and not version.strip()):
        if strict:
            problems.append("version: missing; add e.g. 'version: 1.0.0'")
        else:
            warnings.append("version: missing (treated as 0)")
        return "0"
    if not isinstance(version, str | int | float | datetime.date):
        problems.append("version: must be a string such as '1.0.0'")
        return "0"
    return str(version).strip()


def _check_platforms(
    data: dict[str, Any], problems: list[str], warnings: list[str]
) -> tuple[str, ...]:
    platforms: list[str] = []
    for raw in _string_list(data.get("platforms"), "platforms", problems):
        known = PLATFORM_ALIASES.get(raw.lower())
        if known is None:
            warnings.append(f"platforms: {raw!r} is not linux, macos or windows (ignored)")
        elif known not in platforms:
            platforms.append(known)
    return tuple(platforms)


def _mapping(value: Any, field_name: str, problems: list[str]) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        problems.append(f"{field_name}: expected a mapping of 'key: value' fields")
        return {}
    return value


KNOWN_FIELDS = frozenset(
    {"name", "description", "version", "platforms", "metadata", "related_skills", "author",
     "license", "created_by"}
)  # fmt: skip


def validate_skill_text(
    text: str, *, dir_name: str | None = None, strict: bool = True
) -> tuple[SkillMeta, str]:
    """Parse and check one SKILL.md text; returns (metadata, body).

    Raises SkillValidationError listing every problem found. `dir_name` is the
    directory the file lives (or will live) in; the name must equal it."""
    if len(text.encode("utf-8", errors="replace")) > MAX_SKILL_BYTES:
        raise SkillValidationError(
            [f"SKILL.md is larger than {MAX_SKILL_BYTES:,} bytes; move detail into references/"]
        )
    front, body, body_line = split_front_matter(text)
    data = _load_yaml(front)
    problems: list[str] = []
    warnings: list[str] = []
    name = _check_name(data, dir_name, problems)
    description = _check_description(data, strict, problems, warnings)
    metadata = _mapping(data.get("metadata"), "metadata", problems)
    version = _check_version(data, metadata, strict, problems, warnings)
    herald_meta = _mapping(metadata.get("herald"), "metadata.herald", problems)
    tags = _string_list(
        herald_meta.get("tags", metadata.get("tags")), "metadata.herald.tags", problems
    )
    category = _optional_str(herald_meta.get("category"), "metadata.herald.category", problems)
    platforms = _check_platforms(data, problems, warnings)
    related = _string_list(data.get("related_skills"), "related_skills", problems)
    author = _optional_str(data.get("author"), "author", problems)
    license_ = _optional_str(data.get("license"), "license", problems)
    created_by = _optional_str(data.get("created_by"), "created_by", problems)
    if not body.strip():
        problems.append(
            f"line {body_line}: the body is empty; write the procedure in Markdown below the "
            "front matter"
        )
    if problems:
        raise SkillValidationError(problems)
    meta = SkillMeta(
        name=name,
        description=description,
        version=version,
        platforms=platforms,
        tags=tuple(t.lower() for t in tags),
        category=category.lower() if category else None,
        related_skills=related,
        author=author,
        license=license_,
        created_by=created_by,
        extra={k: v for k, v in data.items() if k not in KNOWN_FIELDS},
        warnings=tuple(warnings),
    )
    return meta, body


def read_skill_file(path: Path) -> str:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise SkillValidationError([f"cannot read: {exc.strerror or exc}"], path=path) from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SkillValidationError(
            [f"not UTF-8 text (byte {exc.start}); save the file as UTF-8"], path=path
        ) from None


def validate_skill_dir(path: Path | str, *, strict: bool = True) -> tuple[SkillMeta, str]:
    """Validate the skill directory `path` (or a SKILL.md file inside one)."""
    path = Path(path)
    if path.name == SKILL_FILE and path.is_file():
        path = path.parent
    skill_file = path / SKILL_FILE
    if not path.is_dir():
        raise SkillValidationError(
            ["not a directory; a skill is a directory with SKILL.md"], path=path
        )
    if not skill_file.is_file():
        raise SkillValidationError([f"no {SKILL_FILE} in this directory"], path=path)
    text = read_skill_file(skill_file)
    try:
        return validate_skill_text(text, dir_name=path.name, strict=strict)
    except SkillValidationError as exc:
        raise SkillValidationError(exc.problems, path=skill_file) from None


_CREATED_BY_RE = re.compile(r"^created_by:.*(?:\n[ \t]+.*)*\n?", re.MULTILINE)


def set_created_by(text: str, value: str | None) -> str:
    """`text` with its top-level ``created_by`` field replaced by `value` (removed when
    None), editing only that field so the rest of the owner's YAML stays as written."""
    front, body, _ = split_front_matter(text)
    front = _CREATED_BY_RE.sub("", front)
    if front and not front.endswith("\n"):
        front += "\n"
    if value is not None:
        front += f"created_by: {value}\n"
    return f"{_FENCE}\n{front}{_FENCE}\n{body}"
