"""`SkillLibrary`: every skill a home can use, from three sources.

Sources and precedence (first wins when two skills share a name):

1. **home** — ``<home>/skills/<name>/SKILL.md``, written by the owner or by the
   agent. A home skill overrides a bundled one of the same name: that is how
   the owner customises a bundled skill (copy it into the home and edit it).
2. **bundled** — shipped inside the package (``herald/skills/bundled``).
3. **external** — the directories in ``skills.external_dirs``, in the order
   listed, read-only. An external skill never overrides a home or bundled
   one: those directories are shared with other agents and change without
   Herald's knowledge, so they must not silently replace a skill the owner
   already relies on. Each such clash is logged once as a warning and listed
   by ``herald skills list``.

A source directory holds skill directories directly or one level down in
category directories (``<root>/<category>/<name>/SKILL.md``, the layout some
other agents use; the directory name then becomes the default category). An
external directory may also be a single skill. Hidden entries (``.archive``,
``.snapshots``) are never skills.

Home and external skills are scanned with ``scan_text(kind="skill")`` when
loaded; a blocked or invalid skill is left out and recorded in `problems` (and
logged), never silently dropped. Skills whose ``platforms`` exclude this OS
are loaded but not offered.

The library re-scans when a SKILL.md, a source directory or the usage sidecar
changes (a cheap stat-based signature), so the tools see a skill created a
moment ago. The system prompt's index is a string taken once per session and
is not affected (see `herald.skills.index`).
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from herald.skills.files import list_files
from herald.skills.index import (
    DEFAULT_CATEGORY,
    is_reserved,
    parse_slash,
    render_index,
    slash_prompt,
)
from herald.skills.skill import Skill, SkillSource
from herald.skills.usage import UsageStore
from herald.skills.validation import (
    SKILL_FILE,
    SkillValidationError,
    read_skill_file,
    validate_skill_text,
)

if TYPE_CHECKING:
    from herald.config import HeraldConfig, HeraldHome

log = logging.getLogger(__name__)

StatKey = tuple[str, int, int, int]
Signature = tuple[StatKey, ...]


def current_platform() -> str:
    if sys.platform.startswith("darwin"):
        return "macos"
    if sys.platform.startswith(("win32", "cygwin")):
        return "windows"
    return "linux"


def default_bundled_dir() -> Path:
    return Path(str(resources.files("herald.skills").joinpath("bundled")))


@dataclass(frozen=True)
class SkillProblem:
    """A skill directory that was found but not loaded, and why."""

    path: Path
    source: SkillSource
    message: str


@dataclass(frozen=True)
class Shadowed:
    """A skill hidden by another of the same name from a higher-precedence source."""

    name: str
    winner: Path
    winner_source: SkillSource
    loser: Path
    loser_source: SkillSource


def _candidates(root: Path) -> list[tuple[Path, str | None]]:
    """(skill directory, category from the layout) under a source root."""
    if not root.is_dir():
        return []
    if (root / SKILL_FILE).is_file():
        return [(root, None)]
    out: list[tuple[Path, str | None]] = []
    for entry in _entries(root):
        if (entry / SKILL_FILE).is_file():
            out.append((entry, None))
            continue
        for child in _entries(entry):
            if (child / SKILL_FILE).is_file():
                out.append((child, entry.name.lower()))
    return out


_unreadable: set[str] = set()


def _entries(folder: Path) -> list[Path]:
    """Visible subdirectories, sorted; an unreadable folder has none (and is logged)."""
    try:
        found = [p for p in folder.iterdir() if not p.name.startswith(".") and p.is_dir()]
    except OSError as exc:
        if str(folder) not in _unreadable:  # once per folder, not on every re-scan
            _unreadable.add(str(folder))
            log.warning("cannot read skills directory %s: %s", folder, exc)
        return []
    return sorted(found, key=lambda p: p.name)


def _stat_key(path: Path) -> StatKey:
    # The inode too: atomic writes replace the file, which coarse mtimes can miss.
    try:
        st = path.stat()
    except OSError:
        return (str(path), -1, -1, -1)
    return (str(path), st.st_mtime_ns, st.st_size, st.st_ino)


class SkillLibrary:
    """The skills of one home (see the module docstring for sources and precedence)."""

    def __init__(
        self,
        home: HeraldHome,
        config: HeraldConfig | None = None,
        *,
        bundled_dir: Path | None = None,
        clock: Callable[[], float] = time.time,
        platform: str | None = None,
    ):
        from herald.config import HeraldConfig

        self.home = home
        self.config = config if config is not None else HeraldConfig()
        self.bundled_dir = bundled_dir if bundled_dir is not None else default_bundled_dir()
        self.clock = clock
        self.platform = platform or current_platform()
        self.usage = UsageStore(home.skills_dir, clock)
        self.problems: list[SkillProblem] = []
        self.shadowed: list[Shadowed] = []
        self._skills: dict[str, Skill] = {}
        self._home_dirs: dict[str, Path] = {}
        self._signature: Signature | None = None
        self._view: dict[str, Skill] | None = None
        self._usage_key: StatKey | None = None
        self._warned: set[tuple[str, str]] = set()
        self._lock = threading.RLock()

    # -- sources -----------------------------------------------------------------

    @property
    def skills_dir(self) -> Path:
        return self.home.skills_dir

    @property
    def enabled(self) -> bool:
        return self.config.skills.enabled

    def external_dirs(self) -> list[Path]:
        out: list[Path] = []
        for raw in self.config.skills.external_dirs:
            path = Path(raw).expanduser()
            out.append(path if path.is_absolute() else self.home.root / path)
        return out

    def roots(self) -> list[tuple[SkillSource, Path]]:
        roots: list[tuple[SkillSource, Path]] = [
            ("home", self.skills_dir),
            ("bundled", self.bundled_dir),
        ]
        roots += [("external", p) for p in self.external_dirs()]
        return roots

    def _signature_now(self) -> Signature:
        keys: list[StatKey] = []
        for _source, root in self.roots():
            keys.append(_stat_key(root))
            for skill_dir, _ in _candidates(root):
                keys.append(_stat_key(skill_dir))
                keys.append(_stat_key(skill_dir / SKILL_FILE))
        return tuple(keys)

    # -- loading -----------------------------------------------------------------

    def refresh(self, *, force: bool = False) -> bool:
        """Re-scan when anything changed on disk; True when it did."""
        with self._lock:
            signature = self._signature_now()
            if not force and signature == self._signature:
                return False
            self._load()
            self._signature = signature
            self._view = None
            return True

    def _current(self) -> dict[str, Skill]:
        """The loaded skills with the sidecar's pinned flag and state applied (the
        sidecar changes with every view, so it is overlaid rather than re-scanned)."""
        self.refresh()
        with self._lock:
            key = _stat_key(self.usage.path)
            if self._view is None or key != self._usage_key:
                usage = self.usage.all()
                self._view = {
                    name: replace(skill, pinned=usage[name].pinned, state=usage[name].state)
                    if name in usage
                    else skill
                    for name, skill in self._skills.items()
                }
                self._usage_key = key
            return self._view

    def _load(self) -> None:
        skills: dict[str, Skill] = {}
        problems: list[SkillProblem] = []
        shadowed: list[Shadowed] = []
        home_dirs: dict[str, Path] = {}
        for source, root in self.roots():
            for skill_dir, layout_category in _candidates(root):
                if source == "home":
                    home_dirs.setdefault(skill_dir.name, skill_dir)
                try:
                    skill = self._load_one(skill_dir, source, layout_category)
                except SkillValidationError as exc:
                    problems.append(SkillProblem(skill_dir, source, str(exc)))
                    self._warn_once("problem", str(skill_dir), "skill not loaded: %s", exc)
                    continue
                winner = skills.get(skill.name)
                if winner is None:
                    skills[skill.name] = skill
                    continue
                shadowed.append(
                    Shadowed(skill.name, winner.path, winner.source, skill.path, skill.source)
                )
                if source == "external":
                    self._warn_once(
                        "clash",
                        f"{skill.name}|{skill.path}",
                        "external skill %s (%s) is ignored: a %s skill of that name takes "
                        "precedence",
                        skill.name,
                        skill.path,
                        winner.source,
                    )
                else:
                    log.info("%s skill %s overrides the %s one", winner.source, skill.name, source)
        self._skills = skills
        self.problems = problems
        self.shadowed = shadowed
        self._home_dirs = home_dirs

    def _load_one(
        self,
        skill_dir: Path,
        source: SkillSource,
        layout_category: str | None,
    ) -> Skill:
        skill_file = skill_dir / SKILL_FILE
        text = read_skill_file(skill_file)
        try:
            meta, body = validate_skill_text(
                text, dir_name=skill_dir.name, strict=source != "external"
            )
        except SkillValidationError as exc:
            raise SkillValidationError(exc.problems, path=skill_file) from None
        if source != "bundled":  # bundled skills are reviewed and tested before release
            # Imported here: a home with only the bundled skills never loads the scanner.
            from herald.safety import scan_text

            scan = scan_text(text, kind="skill")
            if scan.blocked:
                raise SkillValidationError(
                    [f"refused by the injection scanner: {r}" for r in scan.reasons]
                    + ["remove or rewrite those passages (herald skills validate shows this)"],
                    path=skill_file,
                )
        category = meta.category or layout_category or (meta.tags[0] if meta.tags else None)
        return Skill(
            name=meta.name,
            description=meta.description,
            version=meta.version,
            path=skill_dir,
            source=source,
            category=category or DEFAULT_CATEGORY,
            tags=meta.tags,
            platforms=meta.platforms,
            created_by=meta.created_by,
            pinned=False,
            body=body,
            files=list_files(skill_dir),
            related_skills=meta.related_skills,
            available=not meta.platforms or self.platform in meta.platforms,
            meta=meta,
        )

    def _warn_once(self, kind: str, key: str, message: str, *args: object) -> None:
        if (kind, key) in self._warned:
            return
        self._warned.add((kind, key))
        log.warning(message, *args)

    # -- queries -----------------------------------------------------------------

    def skills(self, *, include_unavailable: bool = False) -> list[Skill]:
        """Every loaded skill, sorted by name (only this platform's unless asked)."""
        found = sorted(self._current().values(), key=lambda s: s.name)
        return [s for s in found if include_unavailable or s.available]

    def get(self, name: str, *, include_unavailable: bool = False) -> Skill | None:
        skill = self._current().get(name.strip().lower())
        if skill is None or not (include_unavailable or skill.available):
            return None
        return skill

    def home_dir_of(self, name: str) -> Path | None:
        """The home directory holding skill `name` on disk, loaded or not (an invalid
        or blocked skill can still be repaired or archived)."""
        self.refresh()
        with self._lock:
            return self._home_dirs.get(name)

    def filter(self, *, tag: str | None = None, category: str | None = None) -> list[Skill]:
        tag = tag.strip().lower() if tag else None
        category = category.strip().lower() if category else None
        return [
            s
            for s in self.skills()
            if (tag is None or tag in s.tags) and (category is None or s.category == category)
        ]

    def categories(self) -> list[str]:
        return sorted({s.category for s in self.skills()})

    def index_text(self) -> str:
        """The system prompt's skills block (empty when skills are disabled or none
        exist). Take it once per session: it is frozen with the prompt."""
        if not self.enabled:
            return ""
        return render_index(self.skills())

    def expand_slash(
        self, text: str, *, reserved: Iterable[str] = (), record: bool = True
    ) -> str | None:
        """``/NAME args`` → the instruction to load skill NAME and do `args`; None when
        `text` is not a command for a known skill. Built-in commands (and `reserved`,
        a surface's own) are never skills."""
        if not self.enabled:
            return None
        parsed = parse_slash(text)
        if parsed is None or is_reserved(parsed[0], reserved):
            return None
        skill = self.get(parsed[0])
        if skill is None:
            return None
        if record:
            self.record(skill.name, "use")
        return slash_prompt(skill.name, parsed[1])

    def record(self, name: str, event: str) -> None:
        """Count a usage event; a failure to write the sidecar is logged, never raised
        (usage statistics must not break a turn)."""
        try:
            self.usage.record(name, event)  # type: ignore[arg-type]
        except Exception as exc:
            log.warning("cannot record skill usage for %s: %s", name, exc)
