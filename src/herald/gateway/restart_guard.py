"""The restart-loop guard: stop auto-resuming when resuming keeps crashing the gateway.

If a resumed turn crashes the process, a supervisor restarts it, the turn is resumed
again, and so on. Every boot that resumes interrupted sessions is recorded in a small
JSON file; once `max_boots` such boots fall within `window` seconds, the next boot
skips auto-resume (the gateway still starts and serves new messages). The file is
advisory: a missing, corrupt or unwritable guard never blocks a start.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

log = logging.getLogger(__name__)


def guard_path(home_root: Path) -> Path:
    return home_root / "gateway" / "restart_guard.json"


class RestartGuard:
    def __init__(
        self,
        path: Path,
        *,
        window: float,
        max_boots: int,
        clock: Callable[[], float] = time.time,
    ):
        self.path = path
        self.window = window
        self.max_boots = max_boots
        self.clock = clock

    def recent_boots(self) -> list[float]:
        """Resuming boots within the window (a broken file counts as none)."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            boots = [float(t) for t in data.get("resume_boots", [])]
        except FileNotFoundError:
            return []
        except (OSError, ValueError, TypeError, AttributeError) as exc:
            log.warning("ignoring the unreadable restart guard %s: %s", self.path, exc)
            return []
        now = self.clock()
        return [t for t in boots if 0 <= now - t <= self.window]

    def allows_resume(self) -> bool:
        return len(self.recent_boots()) < self.max_boots

    def record_resume_boot(self) -> None:
        boots = [*self.recent_boots(), self.clock()]
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".guard.", dir=self.path.parent)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump({"resume_boots": boots}, fh)
            os.replace(tmp, self.path)
        except OSError as exc:
            log.warning("could not record the boot in %s: %s", self.path, exc)

    def check_and_record(self) -> bool:
        """At a boot with interrupted sessions: True (and recorded) when resuming is
        allowed, False when the loop guard tripped."""
        if not self.allows_resume():
            log.warning(
                "restart-loop guard: %d resuming boots within %.0f s; not resuming "
                "interrupted sessions this time",
                self.max_boots,
                self.window,
            )
            return False
        self.record_resume_boot()
        return True


__all__ = ["RestartGuard", "guard_path"]
