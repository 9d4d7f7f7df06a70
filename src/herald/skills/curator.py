"""The curator: retires agent-created skills nobody uses. No daemon — the agent calls
`Curator.maybe_run()` when it is idle, and the curator runs when at least
``curator.interval_hours`` have passed since its last run (kept in the usage
sidecar).

A run first snapshots ``skills/`` (``skills/.snapshots/<UTC stamp>.tar.gz``,
the newest ``keep_snapshots`` kept), then looks at each home skill with
``created_by: agent`` that is not pinned. Its age is the time since its last
activity (view, use, patch, create — or the SKILL.md's modification time when
the sidecar knows nothing): past ``stale_after_days`` it is marked stale, past
``archive_after_days`` it moves to ``skills/.archive/`` (never deleted;
``restore`` brings it back). Pinned skills, skills the owner wrote, bundled
and external skills are never touched. ``rollback`` restores a snapshot
(taking a ``-before-rollback`` snapshot of the current state first, so a
rollback can itself be undone).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from filelock import FileLock, Timeout

from herald.skills.files import LOCK_TIMEOUT_SECONDS, library_lock
from herald.skills.manage import ManageResult, move_to_archive, restore_skill, set_pinned
from herald.skills.snapshots import (
    Snapshot,
    SnapshotError,
    check_snapshot,
    create_snapshot,
    list_snapshots,
    prune_snapshots,
    restore_snapshot,
)
from herald.skills.usage import SkillState, SkillUsage, curator_due

if TYPE_CHECKING:
    from collections.abc import Callable

    from herald.config import HeraldConfig, HeraldHome
    from herald.config.schema_skills import CuratorConfig
    from herald.skills.library import SkillLibrary
    from herald.skills.skill import Skill

log = logging.getLogger(__name__)

DAY = 86_400.0
CURATOR_LOCK = ".curator.lock"


@dataclass
class CuratorReport:
    ran_at: float
    snapshot: Path | None = None
    stale: list[str] = field(default_factory=list)
    archived: dict[str, Path] = field(default_factory=dict)
    reactivated: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)  # name -> why it was left alone

    @property
    def changed(self) -> bool:
        return bool(self.stale or self.archived or self.reactivated)

    def summary(self) -> str:
        parts = []
        if self.archived:
            parts.append("archived " + ", ".join(sorted(self.archived)))
        if self.stale:
            parts.append("marked stale " + ", ".join(sorted(self.stale)))
        if self.reactivated:
            parts.append("active again " + ", ".join(sorted(self.reactivated)))
        return "; ".join(parts) or "nothing to curate"


@dataclass(frozen=True)
class RollbackReport:
    snapshot: Path
    safety_snapshot: Path  # the state just before the rollback
    restored: list[str]  # home skills present after the rollback that were not before


class Curator:
    def __init__(
        self,
        library: SkillLibrary,
        config: HeraldConfig | CuratorConfig | None = None,
        home: HeraldHome | None = None,
        clock: Callable[[], float] | None = None,
    ):
        from herald.config.schema_skills import CuratorConfig

        self.library = library
        if config is None:
            config = library.config
        self.config: CuratorConfig = config if isinstance(config, CuratorConfig) else config.curator
        self.home = home if home is not None else library.home
        self.clock = clock if clock is not None else library.clock

    @property
    def skills_dir(self) -> Path:
        return self.home.skills_dir

    # -- scheduling ---------------------------------------------------------------

    def due(self) -> bool:
        """Enabled, and `interval_hours` have passed since the last run (or it never ran)."""
        return curator_due(self.config, self.library.usage, self.clock())

    def maybe_run(self) -> CuratorReport | None:
        """Run if due; never raises (the curator must not disturb an idle agent)."""
        try:
            if not self.due():
                return None
            return self.run()
        except Timeout:
            return None  # another process is curating this home right now
        except Exception as exc:
            log.warning("skill curator failed: %s", exc, exc_info=True)
            return None

    # -- the run ------------------------------------------------------------------

    def _age(self, skill: Skill, last_activity: float | None, created_at: float | None) -> float:
        reference = last_activity or created_at
        if reference is None:
            try:
                reference = skill.skill_file.stat().st_mtime
            except OSError:
                reference = self.clock()
        return max(0.0, self.clock() - reference)

    def run(self) -> CuratorReport:
        """Snapshot, then mark stale and archive unused agent-created skills."""
        self.skills_dir.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(self.skills_dir / CURATOR_LOCK), timeout=LOCK_TIMEOUT_SECONDS)
        with lock:
            now = self.clock()
            report = CuratorReport(ran_at=now)
            with library_lock(self.skills_dir):
                report.snapshot = create_snapshot(self.skills_dir, now)
                prune_snapshots(self.skills_dir, self.config.keep_snapshots)
            usage = self.library.usage.all()
            states: dict[str, SkillState] = {}
            for skill in self.library.skills(include_unavailable=True):
                why = self._exempt(skill, usage)
                if why is not None:
                    report.skipped[skill.name] = why
                    continue
                record = usage.get(skill.name)
                age_days = (
                    self._age(
                        skill,
                        record.last_activity if record else None,
                        record.created_at if record else None,
                    )
                    / DAY
                )
                state = record.state if record else "active"
                if age_days >= self.config.archive_after_days:
                    report.archived[skill.name] = move_to_archive(
                        self.library, skill.path, skill.name
                    )
                    states[skill.name] = "stale"
                elif age_days >= self.config.stale_after_days:
                    if state != "stale":
                        report.stale.append(skill.name)
                        states[skill.name] = "stale"
                elif state == "stale":
                    report.reactivated.append(skill.name)
                    states[skill.name] = "active"
            self.library.usage.set_state(states)
            self.library.usage.set_last_curator_run(now)
        if report.changed:
            log.info("skill curator: %s", report.summary())
        return report

    @staticmethod
    def _exempt(skill: Skill, usage: dict[str, SkillUsage]) -> str | None:
        if skill.source != "home":
            return skill.source
        record = usage.get(skill.name)
        if record is not None and record.pinned:
            return "pinned"
        if not skill.agent_created:
            return "written by the owner"
        return None

    # -- snapshots ----------------------------------------------------------------

    def snapshots(self) -> list[Snapshot]:
        return list_snapshots(self.skills_dir)

    def _find_snapshot(self, snapshot: str | Path | None) -> Path:
        if snapshot is None:
            found = list_snapshots(self.skills_dir, before_rollback=False) or self.snapshots()
            if not found:
                raise SnapshotError(
                    "there are no skill snapshots yet; the curator takes one per run"
                )
            return found[-1].path
        wanted = str(snapshot).strip()
        for candidate in self.snapshots():
            if wanted in (
                candidate.name,
                candidate.name.removesuffix(".tar.gz"),
                str(candidate.path),
            ):
                return candidate.path
        names = ", ".join(s.name for s in self.snapshots()) or "none"
        raise SnapshotError(f"no snapshot {wanted!r}; snapshots: {names}")

    def rollback(self, snapshot: str | Path | None = None) -> RollbackReport:
        """Restore the newest curator snapshot, or the one named. Skills brought back
        count as active from now on, so the next run does not archive them again at once
        (pin them to keep them for good)."""
        path = self._find_snapshot(snapshot)
        check_snapshot(path)
        before = {
            s.name for s in self.library.skills(include_unavailable=True) if s.source == "home"
        }
        with library_lock(self.skills_dir):
            safety = create_snapshot(self.skills_dir, self.clock(), before_rollback=True)
            restore_snapshot(self.skills_dir, path)
            prune_snapshots(self.skills_dir, self.config.keep_snapshots)
        self.library.refresh(force=True)
        after = {
            s.name for s in self.library.skills(include_unavailable=True) if s.source == "home"
        }
        restored = sorted(after - before)
        self.library.usage.touch(restored)
        self.library.usage.set_last_curator_run(self.clock())
        return RollbackReport(path, safety, restored)

    # -- owner actions ------------------------------------------------------------

    def pin(self, name: str) -> ManageResult:
        return set_pinned(self.library, name, True)

    def unpin(self, name: str) -> ManageResult:
        return set_pinned(self.library, name, False)

    def restore(self, name: str) -> ManageResult:
        return restore_skill(self.library, name)
