"""Checkpoints: snapshots of a session's workdir in a shadow git repository under the
home, taken before a tool changes files, so `/rollback` and `herald checkpoints
restore` can undo what a turn did (DESIGN.md invariant 20).

- `CheckpointStore`: one workdir's shadow repository (snapshot, list, diff, restore,
  prune); `store_for(home_root, workdir, config)` opens one.
- `CheckpointService` / `TurnCheckpoints`: the per-session step the tool registry
  calls before a change (`before_change`).
- `workdir_refusal(workdir, herald_home)`: why a workdir gets no checkpoints.
- `rollback_command(service, arg)`, `list_text`, `restore_text`: what `/rollback`
  and `herald checkpoints` say, the same on every surface.
- `covers(store, paths)`: whether the newest checkpoint holds those paths (for the
  sandbox policy: a destructive command on uncovered paths is not relaxed).

Runs on real `git` with the user's config, hooks and filters kept out (see `git`).
"""

from herald.checkpoints.git import GitError, git_available
from herald.checkpoints.policy import covers, workdir_refusal
from herald.checkpoints.report import ROLLBACK_USAGE, list_text, restore_text, rollback_command
from herald.checkpoints.scan import Limits
from herald.checkpoints.service import (
    LOCAL_WORKDIR_BACKENDS,
    CheckpointService,
    TurnCheckpoints,
    checkpoint_root,
    store_for,
)
from herald.checkpoints.store import (
    Checkpoint,
    CheckpointError,
    CheckpointStore,
    RestoreResult,
    SnapshotResult,
)

__all__ = [
    "LOCAL_WORKDIR_BACKENDS",
    "ROLLBACK_USAGE",
    "Checkpoint",
    "CheckpointError",
    "CheckpointService",
    "CheckpointStore",
    "GitError",
    "Limits",
    "RestoreResult",
    "SnapshotResult",
    "TurnCheckpoints",
    "checkpoint_root",
    "covers",
    "git_available",
    "list_text",
    "restore_text",
    "rollback_command",
    "store_for",
    "workdir_refusal",
]
