"""The checkpoint step before a tool changes files, as one agent's service.

The agent builds one `CheckpointService` per session and hands each turn a
`TurnCheckpoints` (through `ToolContext.checkpoint`); the tool registry calls
`before_change` before a file-changing tool or a command that may write runs. A
file tool is checkpointed once per turn (before the first one: what the turn's own
later writes overwrite is the turn's own work); a command every time (an unchanged
tree costs no new commit). A backend whose workdir is not on this machine (ssh), a
refused workdir, git missing or a failed snapshot never fails the tool call: the
reason is returned once per session, for the model and the user to read, and
`covers()` then answers False so nothing is relaxed on the strength of it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

from herald.checkpoints.git import GitError, git_available
from herald.checkpoints.policy import covers, workdir_refusal
from herald.checkpoints.scan import Limits
from herald.checkpoints.store import CheckpointError, CheckpointStore
from herald.config import CheckpointsConfig

log = logging.getLogger(__name__)

# Backends whose workdir is a directory of this machine at the same path: local runs
# there, bwrap and docker bind-mount it. An ssh workdir lives on another host.
LOCAL_WORKDIR_BACKENDS = frozenset({"local", "bwrap", "docker"})


def checkpoint_root(herald_root: Path) -> Path:
    return herald_root / "checkpoints"


def store_for(herald_root: Path, workdir: str | Path, config: CheckpointsConfig) -> CheckpointStore:
    limits = Limits.from_mb(config.max_file_mb, config.max_total_mb)
    return CheckpointStore(checkpoint_root(herald_root), Path(workdir), limits)


class CheckpointService:
    """Checkpoints of one session's workdir (`workdir()` is asked at each change, so a
    session whose environment moves is followed)."""

    def __init__(
        self,
        config: CheckpointsConfig,
        herald_root: Path,
        *,
        backend: str,
        workdir: Callable[[], str],
        session_id: Callable[[], str | None] = lambda: None,
    ):
        self.config = config
        self.herald_root = herald_root
        self.backend = backend
        self._workdir = workdir
        self._session_id = session_id
        self._lock = threading.Lock()
        self._told: set[str] = set()
        self._turns = 0

    def refusal(self) -> tuple[str | None, CheckpointStore | None]:
        """(why there is no checkpoint, None) or (None, the store)."""
        if not self.config.enabled:
            return "checkpoints.enabled is false", None
        if self.backend not in LOCAL_WORKDIR_BACKENDS:
            return f"the {self.backend} backend's workdir is on another machine", None
        try:
            workdir = self._workdir()
        except Exception as exc:  # an environment that cannot say where it is
            return f"the workdir is unknown ({exc})", None
        why = workdir_refusal(workdir, self.herald_root)
        if why is not None:
            return why, None
        if not git_available():
            return "git is not installed", None
        return None, store_for(self.herald_root, workdir, self.config)

    def store(self) -> CheckpointStore | None:
        return self.refusal()[1]

    def covers(self, paths: Iterable[str]) -> bool:
        """Whether this session's newest checkpoint holds `paths` (relative to the workdir,
        or absolute) and everything under them; False wherever checkpoints are refused or
        off. The sandbox policy's question: a destructive command whose targets are not
        covered is not relaxed (see `policy.covers`)."""
        store = self.store()
        return store is not None and covers(store, paths)

    def turn(self) -> TurnCheckpoints:
        with self._lock:
            self._turns += 1
            return TurnCheckpoints(self, str(self._turns))

    def _once(self, message: str) -> str | None:
        with self._lock:
            if message in self._told:
                return None
            self._told.add(message)
        return message

    def snapshot(self, *, tool: str, detail: str, turn: str | None) -> str | None:
        """Take a checkpoint now; returns a notice to show once, or None."""
        why, store = self.refusal()
        if store is None:
            if not self.config.enabled:
                return None  # the owner turned them off: nothing to announce
            return self._once(
                f"No checkpoint was taken: {why}. Changes made here cannot be undone "
                "with /rollback."
            )
        try:
            store.snapshot(tool=tool, detail=detail, turn=turn, session=self._session_id())
        except (CheckpointError, GitError, OSError) as exc:
            log.warning("checkpoint of %s failed: %s", store.workdir, exc)
            return self._once(
                f"No checkpoint was taken ({exc}). Changes made now cannot be undone "
                "with /rollback."
            )
        return None


class TurnCheckpoints:
    """One turn's view: what a file tool already checkpointed this turn."""

    def __init__(self, service: CheckpointService, turn: str):
        self.service = service
        self.turn = turn
        self._files_done = False
        self._lock = threading.Lock()

    def before_change(self, tool: str, command: str | None = None) -> str | None:
        """Checkpoint before `tool` changes files (`command`: the shell command it runs).
        Returns a notice for the model and the user, at most once per session."""
        with self._lock:
            if command is None:
                if self._files_done:
                    return None
                self._files_done = True
            return self.service.snapshot(tool=tool, detail=command or "", turn=self.turn)

    def covers(self, paths: Iterable[str]) -> bool:
        return self.service.covers(paths)
