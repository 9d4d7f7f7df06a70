"""What changed since the last snapshot, found by git's own walk over the stat cache.

The quick path of a snapshot: instead of a Python walk that sizes every file,
`git ls-files --others --modified --deleted` (C, comparing each file's stat data
with the shadow index) names only what changed, and only those files are sized and
added. Without a prior snapshot the caller does the full walk (`scan.scan_workdir`).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from herald.checkpoints.git import ShadowGit
from herald.checkpoints.scan import MB


@dataclass
class Delta:
    add: list[str] = field(default_factory=list)  # new, changed and deleted paths
    left_out: dict[str, str] = field(default_factory=dict)
    added_bytes: int = 0


def changes_since_index(
    git: ShadowGit, work_tree: Path, index: Path, max_file_bytes: int | None
) -> Delta | None:
    """The delta of `work_tree` against `index`, or None when there is no index yet."""
    if not index.exists() or not work_tree.is_dir():
        return None
    out = git.run(["ls-files", "-z", "-o", "-m", "-d"], work_tree=work_tree, index=index)
    delta = Delta()
    seen: set[str] = set()
    for rel in out.decode("utf-8", "surrogateescape").split("\0"):
        if not rel or rel in seen:
            continue
        seen.add(rel)
        if rel.endswith("/"):  # git lists an untracked nested repository as a directory
            delta.left_out[rel.rstrip("/")] = "a nested git repository"
            continue
        try:
            info = os.lstat(work_tree / rel)
        except FileNotFoundError:
            delta.add.append(rel)  # deleted: `add -A` records the removal
            continue
        if stat.S_ISREG(info.st_mode):
            if max_file_bytes is not None and info.st_size > max_file_bytes:
                delta.left_out[rel] = f"{info.st_size / MB:.1f} MB, over checkpoints.max_file_mb"
                continue
            delta.added_bytes += info.st_size
        delta.add.append(rel)
    return delta
