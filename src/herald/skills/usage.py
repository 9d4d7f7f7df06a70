"""The usage sidecar, ``skills/.usage.json``: per-skill counters (views, uses,
patches), creation and last-activity times, the pinned flag and the curator
state (active or stale), plus the time of the curator's last run.

Every change goes through `herald.config.shared_file.update_shared_file` (locked
re-read, compare-and-swap, atomic replace), so two processes sharing a home never
lose each other's updates. A corrupt or
missing file reads as empty (and is rewritten on the next change) rather than
breaking the agent.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from herald.config.shared_file import read_shared_text, update_shared_file
from herald.skills.files import LOCK_TIMEOUT_SECONDS

if TYPE_CHECKING:
    from herald.config.schema_skills import CuratorConfig

log = logging.getLogger(__name__)

USAGE_FILE = ".usage.json"
FORMAT_VERSION = 1
R = TypeVar("R")
UsageEvent = Literal["view", "use", "patch", "create", "edit", "restore"]
SkillState = Literal["active", "stale"]
_COUNTERS = {"view": "views", "use": "uses", "patch": "patches"}


@dataclass(frozen=True)
class SkillUsage:
    views: int = 0
    uses: int = 0
    patches: int = 0
    created_at: float | None = None
    last_activity: float | None = None
    pinned: bool = False
    state: SkillState = "active"

    @classmethod
    def from_dict(cls, raw: Any) -> SkillUsage:
        if not isinstance(raw, dict):
            return cls()

        def number(key: str) -> float | None:
            value = raw.get(key)
            return float(value) if isinstance(value, int | float) else None

        state = raw.get("state")
        return cls(
            views=int(raw.get("views") or 0),
            uses=int(raw.get("uses") or 0),
            patches=int(raw.get("patches") or 0),
            created_at=number("created_at"),
            last_activity=number("last_activity"),
            pinned=bool(raw.get("pinned", False)),
            state="stale" if state == "stale" else "active",
        )


class UsageStore:
    """Reads and updates one home's usage sidecar."""

    def __init__(self, skills_dir: Path, clock: Callable[[], float] = time.time):
        self.path = skills_dir / USAGE_FILE
        self.clock = clock

    def read(self) -> dict[str, Any]:
        try:
            text = read_shared_text(self.path)
        except (OSError, ValueError) as exc:
            log.warning("skill usage file %s is unreadable (%s); starting afresh", self.path, exc)
            return _empty()
        return self._parse(text)

    def _parse(self, text: str | None) -> dict[str, Any]:
        if text is None:
            return _empty()
        try:
            data = json.loads(text)
        except ValueError as exc:
            log.warning("skill usage file %s is unreadable (%s); starting afresh", self.path, exc)
            return _empty()
        if not isinstance(data, dict) or not isinstance(data.get("skills"), dict):
            return _empty()
        data.setdefault("curator", {})
        return data

    def _edit(self, change: Callable[[dict[str, Any]], R]) -> R:
        # update_shared_file: lock, re-read, compare-and-swap, atomic replace; `change`
        # may run again on fresher data if another writer got in before the rename.
        def transform(text: str | None) -> tuple[str, R]:
            data = self._parse(text)
            result = change(data)
            data["version"] = FORMAT_VERSION
            return json.dumps(data, indent=2, sort_keys=True) + "\n", result

        return update_shared_file(self.path, transform, timeout=LOCK_TIMEOUT_SECONDS)

    def get(self, name: str) -> SkillUsage:
        return SkillUsage.from_dict(self.read()["skills"].get(name))

    def all(self) -> dict[str, SkillUsage]:
        return {name: SkillUsage.from_dict(raw) for name, raw in self.read()["skills"].items()}

    def record(self, name: str, event: UsageEvent) -> SkillUsage:
        """Count `event` for `name`; any event is activity and makes a stale skill active."""
        now = self.clock()

        def count(data: dict[str, Any]) -> SkillUsage:
            entry = data["skills"].setdefault(name, {})
            counter = _COUNTERS.get(event)
            if counter is not None:
                entry[counter] = int(entry.get(counter) or 0) + 1
            if event == "create":
                entry["created_at"] = now
            entry["last_activity"] = now
            entry["state"] = "active"
            return SkillUsage.from_dict(entry)

        return self._edit(count)

    def set_pinned(self, name: str, pinned: bool) -> None:
        self._edit(lambda data: data["skills"].setdefault(name, {}).__setitem__("pinned", pinned))

    def set_state(self, names: dict[str, SkillState]) -> None:
        if not names:
            return

        def mark(data: dict[str, Any]) -> None:
            for name, state in names.items():
                data["skills"].setdefault(name, {})["state"] = state

        self._edit(mark)

    def touch(self, names: list[str]) -> None:
        """Mark `names` active as of now (restored skills get a fresh start)."""
        if not names:
            return
        now = self.clock()

        def activate(data: dict[str, Any]) -> None:
            for name in names:
                entry = data["skills"].setdefault(name, {})
                entry["last_activity"] = now
                entry["state"] = "active"

        self._edit(activate)

    def last_curator_run(self) -> float | None:
        value = self.read()["curator"].get("last_run")
        return float(value) if isinstance(value, int | float) else None

    def set_last_curator_run(self, when: float) -> None:
        self._edit(lambda data: data["curator"].__setitem__("last_run", when))


def curator_due(config: CuratorConfig, usage: UsageStore, now: float) -> bool:
    """Whether the curator should run: enabled, and `interval_hours` have passed since its
    last run (or it never ran). Here, beside the sidecar that records the last run, so
    the check after every turn loads none of the curator's code (snapshots, archiving)."""
    if not config.enabled:
        return False
    last = usage.last_curator_run()
    return last is None or now - last >= config.interval_hours * 3600


def _empty() -> dict[str, Any]:
    return {"version": FORMAT_VERSION, "skills": {}, "curator": {}}
