"""The shadow repository of one workdir: snapshot, list, diff, restore, prune.

Layout: `<home>/checkpoints/<sha256 of the workdir path, 16 hex>/` holds `repo/` (a
bare git repository, owner-only), one index per tree (`index-files`, `index-git`) so
an unchanged tree is re-hashed from the stat cache only, and `WORKDIR` (the path, for
people and for a hash collision check). Nothing is written inside the project.

A checkpoint is a parentless commit under `refs/checkpoints/<ns timestamp>` whose
tree has `files/` (the workdir: tracked, untracked and ignored files alike; the
project's `.gitignore` decides nothing here) and, when it fit the limits, `git/` (the
project's `.git` directory as plain files, so `rm -rf .git` or `git reset --hard` can
be undone). Its message is JSON: when, which turn and tool, and what the limits left
out. Content addressing makes an unchanged tree cost one `git add -A` over the stat
cache and one `write-tree`; a snapshot equal to the newest one makes no new commit.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from herald.checkpoints.delta import Delta, changes_since_index
from herald.checkpoints.git import GitError, ShadowGit
from herald.checkpoints.scan import DOT_GIT, Limits, literal_excludes, scan_workdir

REF_PREFIX = "refs/checkpoints/"
FILES = "files"
GIT = "git"


def _workdir_name(tree_path: str) -> str:
    """A path of a checkpoint's commit as the user knows it: the workdir's files are under
    ``files/`` and the project's ``.git`` under ``git/``."""
    top, _, rest = tree_path.partition("/")
    if top == FILES:
        return rest
    if top == GIT:
        return f".git/{rest}" if rest else ".git"
    return tree_path


RECORD_END = "\x1e"
RESTORE_TOOL = "restore"  # the tool name of the checkpoint a restore takes first


_THREAD_LOCKS: dict[str, threading.Lock] = {}  # flock does not order threads of one process
_THREAD_LOCKS_GUARD = threading.Lock()


class CheckpointError(RuntimeError):
    """A checkpoint operation could not be done; the message says why and what to do."""


@dataclass(frozen=True)
class Checkpoint:
    number: int  # 1 = the newest
    commit: str
    tree: str
    ref: str
    created: float
    tool: str
    detail: str
    turn: str | None
    session: str | None
    left_out: dict[str, str]
    has_git_dir: bool
    files_tree: str | None = None
    git_tree: str | None = None
    total_bytes: int | None = None  # None: an older checkpoint, without the sizes

    @property
    def when(self) -> str:
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.created))


@dataclass(frozen=True)
class _Trees:
    files: str
    git: str | None
    left_out: dict[str, str]
    total_bytes: int


@dataclass(frozen=True)
class SnapshotResult:
    checkpoint: Checkpoint
    created: bool  # False: the tree equalled the newest checkpoint's, nothing was added


@dataclass(frozen=True)
class RestoreResult:
    target: Checkpoint
    undo: Checkpoint  # the state just before the restore (restore it to undo this one)
    restored: int
    removed: tuple[str, ...]


def shadow_dir(root: Path, workdir: Path) -> Path:
    digest = hashlib.sha256(os.fsencode(str(workdir))).hexdigest()[:16]
    return root / digest


class CheckpointStore:
    """Checkpoints of `workdir`, kept under `root` (`<home>/checkpoints`)."""

    def __init__(self, root: Path, workdir: Path, limits: Limits):
        self.workdir = Path(os.path.realpath(workdir))
        self.dir = shadow_dir(root, self.workdir)
        self.git = ShadowGit(self.dir / "repo")
        self.limits = limits

    # ---- taking -------------------------------------------------------------------------

    def _prepare(self) -> None:
        if not self.dir.exists():
            self.dir.mkdir(parents=True, exist_ok=True)
            os.chmod(self.dir, 0o700)
        marker = self.dir / "WORKDIR"
        if marker.exists():
            if marker.read_text(encoding="utf-8", errors="surrogateescape") != str(self.workdir):
                raise CheckpointError(
                    f"the shadow repository {self.dir} belongs to another workdir"
                )
        else:
            marker.write_text(str(self.workdir), encoding="utf-8", errors="surrogateescape")
        self.git.init()

    def _tree_of(self, work_tree: Path, index: Path, excludes: list[str]) -> str:
        self.git.run(
            ["add", "--all", "--force", "--pathspec-from-file=-", "--pathspec-file-nul"],
            work_tree=work_tree,
            index=index,
            stdin=literal_excludes(excludes),
        )
        return self.git.text(["write-tree"], work_tree=work_tree, index=index)

    @contextmanager
    def _locked(self) -> Iterator[None]:
        """One change of the shadow repository at a time: sub-agents and other Herald
        processes may checkpoint the same workdir at once (git's index.lock would fail
        one of them)."""
        if not self.dir.exists():
            self.dir.mkdir(parents=True, exist_ok=True)
            os.chmod(self.dir, 0o700)
        with _THREAD_LOCKS_GUARD:
            thread_lock = _THREAD_LOCKS.setdefault(str(self.dir), threading.Lock())
        with thread_lock, open(self.dir / "lock", "a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def snapshot(
        self,
        *,
        tool: str,
        detail: str = "",
        turn: str | None = None,
        session: str | None = None,
    ) -> SnapshotResult:
        with self._locked():
            return self._snapshot(tool=tool, detail=detail, turn=turn, session=session)

    def _snapshot(
        self, *, tool: str, detail: str, turn: str | None, session: str | None
    ) -> SnapshotResult:
        if not self.workdir.is_dir():
            raise CheckpointError(f"{self.workdir} is not a directory")
        self._prepare()
        newest = self.newest()
        trees = self._quick_trees(newest) or self._full_trees()
        if newest is not None and (newest.files_tree, newest.git_tree) == (trees.files, trees.git):
            return SnapshotResult(newest, created=False)
        entries = [f"040000 tree {trees.files}\t{FILES}"]
        if trees.git is not None:
            entries.append(f"040000 tree {trees.git}\t{GIT}")
        tree = self.git.text(["mktree"], stdin=("\n".join(entries) + "\n").encode())
        message = json.dumps(
            {
                "created": time.time(),
                "tool": tool,
                "detail": detail[:500],
                "turn": turn,
                "session": session,
                "workdir": str(self.workdir),
                "left_out": trees.left_out,
                "git_dir": trees.git is not None,
                "files_tree": trees.files,
                "git_tree": trees.git,
                "total_bytes": trees.total_bytes,
            },
            ensure_ascii=False,
        )
        commit = self.git.text(["commit-tree", tree], stdin=message.encode())
        ref = f"{REF_PREFIX}{time.time_ns():020d}"
        self.git.run(["update-ref", ref, commit])
        return SnapshotResult(self._get_ref(ref), created=True)

    def _full_trees(self) -> _Trees:
        """Size every file (the limits decide what is left out), then add all the rest."""
        scan = scan_workdir(self.workdir, self.limits)
        excludes = [p for p in scan.left_out if p != DOT_GIT]
        files = self._tree_of(self.workdir, self.dir / "index-files", excludes)
        git_tree = None
        if scan.include_dot_git:
            git_tree = self._tree_of(self.workdir / DOT_GIT, self.dir / "index-git", [])
        else:
            (self.dir / "index-git").unlink(missing_ok=True)  # start afresh when it returns
        return _Trees(files, git_tree, scan.left_out, scan.total_bytes)

    def _quick_trees(self, newest: Checkpoint | None) -> _Trees | None:
        """Add only what git's stat-cache walk says changed since the newest checkpoint,
        while the total stays within the limit (counted generously: a changed file's old
        size is not subtracted, so the full walk runs again well before the limit).
        None: take the full walk."""
        if newest is None or newest.total_bytes is None:
            return None
        dot_git = self.workdir / DOT_GIT
        has_git = dot_git.is_dir() and not dot_git.is_symlink()
        if has_git != newest.has_git_dir:
            return None
        files = changes_since_index(
            self.git, self.workdir, self.dir / "index-files", self.limits.max_file_bytes
        )
        git_delta = Delta()
        if has_git:
            git_delta = changes_since_index(self.git, dot_git, self.dir / "index-git", None)  # type: ignore[assignment]
        if files is None or git_delta is None:
            return None
        total = newest.total_bytes + files.added_bytes + git_delta.added_bytes
        if total > self.limits.max_total_bytes:
            return None
        try:
            files_tree = self._tree_of_paths(self.workdir, self.dir / "index-files", files.add)
            git_tree = None
            if has_git:
                git_tree = self._tree_of_paths(dot_git, self.dir / "index-git", git_delta.add)
        except GitError:  # a file vanished between the walk and the add: walk it all
            return None
        return _Trees(files_tree, git_tree, files.left_out, total)

    def _tree_of_paths(self, work_tree: Path, index: Path, paths: list[str]) -> str:
        if paths:
            specs = b"".join(
                f":(literal){p}".encode("utf-8", "surrogateescape") + b"\0" for p in paths
            )
            self.git.run(
                ["add", "--all", "--force", "--pathspec-from-file=-", "--pathspec-file-nul"],
                work_tree=work_tree,
                index=index,
                stdin=specs,
            )
        return self.git.text(["write-tree"], work_tree=work_tree, index=index)

    # ---- reading ------------------------------------------------------------------------

    def list(self, count: int | None = None) -> list[Checkpoint]:
        """Newest first (one `for-each-ref`, so listing stays cheap)."""
        if not (self.git.git_dir / "HEAD").exists():
            return []
        args = [
            "for-each-ref",
            "--sort=-refname",
            f"--format=%(refname)%00%(objectname)%00%(tree)%00%(contents){RECORD_END}",
        ]
        if count is not None:
            args.append(f"--count={count}")
        out = self.git.text([*args, REF_PREFIX])
        found = []
        for number, record in enumerate(r for r in out.split(RECORD_END) if r.strip()):
            ref, commit, tree, body = record.strip("\n").split("\0", 3)
            found.append(_parse(number + 1, ref, commit, tree, body))
        return found

    def _get_ref(self, ref: str) -> Checkpoint:
        for checkpoint in self.list():
            if checkpoint.ref == ref:
                return checkpoint
        raise CheckpointError(f"checkpoint {ref} vanished")

    def newest(self) -> Checkpoint | None:
        found = self.list(count=1)
        return found[0] if found else None

    def get(self, number: int = 1) -> Checkpoint:
        found = self.list()
        if not found:
            raise CheckpointError(f"there are no checkpoints of {self.workdir} yet")
        if not 1 <= number <= len(found):
            raise CheckpointError(
                f"there is no checkpoint {number}; {self.workdir} has 1 to {len(found)} "
                "(see `herald checkpoints list`)"
            )
        return found[number - 1]

    def files(self, checkpoint: Checkpoint) -> list[str]:
        out = self.git.text(["ls-tree", "-r", "--name-only", "-z", f"{checkpoint.commit}:{FILES}"])
        return [p for p in out.split("\0") if p]

    def changed_files(self, checkpoint: Checkpoint, before: Checkpoint | None) -> list[str]:
        """What differs between `checkpoint` and the one `before` it (all its files when
        there is none)."""
        if before is None:
            return self.files(checkpoint)
        out = self.git.text(
            ["diff-tree", "-r", "--name-only", "-z", before.commit, checkpoint.commit]
        )
        return [_workdir_name(p) for p in out.split("\0") if p]

    def diff(self, number: int = 1, path: str | None = None) -> str:
        """The checkpoint against the workdir as it is now (a unified diff, `git diff`
        of the two trees; binary files are named, not shown)."""
        checkpoint = self.get(number)
        now = self._current_tree()
        args = ["diff", "--no-color", "--no-ext-diff", "--no-textconv", "--find-renames"]
        args += [f"{checkpoint.commit}:{FILES}", now]
        if path is not None:
            args += ["--", f":(literal){self._relative(path)}"]
        return self.git.text(args)

    def _current_tree(self) -> str:
        """The workdir's files as a tree, without recording a checkpoint."""
        self._prepare()
        scan = scan_workdir(self.workdir, self.limits)
        excludes = [p for p in scan.left_out if p != DOT_GIT]
        return self._tree_of(self.workdir, self.dir / "index-files", excludes)

    def _relative(self, path: str) -> str:
        absolute = Path(os.path.normpath(self.workdir / path))
        try:
            rel = absolute.relative_to(self.workdir)
        except ValueError:
            raise CheckpointError(f"{path} is outside {self.workdir}") from None
        return "." if str(rel) == "." else str(rel)

    # ---- restoring ----------------------------------------------------------------------

    def restore(
        self, number: int = 1, *, path: str | None = None, clean: bool = False
    ) -> RestoreResult:
        """Bring checkpoint `number` back (all of it, or `path`). Files deleted since come
        back and changed ones are overwritten; files created since stay unless `clean`.
        The current state is checkpointed first, so restoring that undoes this; restoring
        such an undo checkpoint always cleans, since what the restore brought back must go
        again for the undo to be whole."""
        with self._locked():
            return self._restore(number, path, clean)

    def _restore(self, number: int, path: str | None, clean: bool) -> RestoreResult:
        target = self.get(number)  # resolved before the undo checkpoint shifts the numbers
        clean = clean or target.tool == RESTORE_TOOL
        rel = self._relative(path) if path is not None else None
        undo = self._snapshot(
            tool=RESTORE_TOOL,
            detail=f"before restoring checkpoint {number}",
            turn=None,
            session=None,
        )
        restored, removed = 0, []
        for name, work_tree, index_name in (
            (FILES, self.workdir, "index-restore"),
            (GIT, self.workdir / DOT_GIT, "index-restore-git"),
        ):
            touched, sub = _sub_path(rel, name)
            if not touched or (name == GIT and not target.has_git_dir):
                continue
            index = self.dir / index_name
            self.git.run(["read-tree", f"{target.commit}:{name}"], index=index)
            paths = self._matching(index, sub)
            _real_directory(work_tree)
            if paths:
                self.git.run(
                    ["checkout-index", "--force", "-z", "--stdin"],
                    work_tree=work_tree,
                    index=index,
                    stdin=b"\0".join(p.encode("utf-8", "surrogateescape") for p in paths) + b"\0",
                )
            restored += len(paths)
            if clean and (name == FILES or undo.checkpoint.has_git_dir):
                removed += self._clean(target, undo.checkpoint, name, work_tree, sub)
            index.unlink(missing_ok=True)
        if rel is not None and restored == 0:
            raise CheckpointError(f"{path} is not in checkpoint {number}")
        return RestoreResult(target, undo.checkpoint, restored, tuple(removed))

    def _matching(self, index: Path, sub: str | None) -> list[str]:
        args = ["ls-files", "-z"]
        if sub is not None and sub != ".":
            args += ["--", f":(literal){sub}"]
        out = self.git.run(args, index=index).decode("utf-8", "surrogateescape")
        return [p for p in out.split("\0") if p]

    def _clean(
        self, target: Checkpoint, now: Checkpoint, name: str, work_tree: Path, sub: str | None
    ) -> list[str]:
        args = ["diff-tree", "-r", "--name-only", "-z", "--diff-filter=A"]
        args += [f"{target.commit}:{name}", f"{now.commit}:{name}"]
        if sub is not None and sub != ".":
            args += ["--", f":(literal){sub}"]
        out = self.git.run(args).decode("utf-8", "surrogateescape")
        removed = []
        for rel in (p for p in out.split("\0") if p):
            victim = work_tree / rel
            if not _inside(victim.parent, work_tree):
                continue  # a parent became a symlink: never delete outside the workdir
            if victim.is_symlink() or victim.is_file():
                victim.unlink()
                removed.append(rel if name == FILES else f"{DOT_GIT}/{rel}")
                _remove_empty_parents(victim.parent, work_tree)
        return removed

    # ---- pruning ------------------------------------------------------------------------

    def prune(self, *, keep_last: int, keep_days: float, now: float | None = None) -> int:
        """Drop checkpoints beyond the newest `keep_last` that are older than
        `keep_days`, and the objects only they held. Returns how many went."""
        if not (self.git.git_dir / "HEAD").exists():
            return 0
        with self._locked():
            return self._prune(keep_last, keep_days, time.time() if now is None else now)

    def _prune(self, keep_last: int, keep_days: float, now: float) -> int:
        doomed = [
            c for c in self.list() if c.number > keep_last and now - c.created > keep_days * 86400
        ]
        for checkpoint in doomed:
            self.git.run(["update-ref", "-d", checkpoint.ref])
        if doomed:
            self.git.run(["reflog", "expire", "--expire=now", "--all"])
            self.git.run(["prune", "--expire=now"])
        return len(doomed)

    def forget(self) -> None:
        """Remove this workdir's shadow repository entirely."""
        shutil.rmtree(self.dir, ignore_errors=True)


def _parse(number: int, ref: str, commit: str, tree: str, body: str) -> Checkpoint:
    try:
        meta = json.loads(body)
    except json.JSONDecodeError:
        meta = {}
    return Checkpoint(
        number=number,
        commit=commit,
        tree=tree,
        ref=ref,
        created=float(meta.get("created", 0.0)),
        tool=str(meta.get("tool", "?")),
        detail=str(meta.get("detail", "")),
        turn=meta.get("turn"),
        session=meta.get("session"),
        left_out=dict(meta.get("left_out") or {}),
        has_git_dir=bool(meta.get("git_dir")),
        files_tree=meta.get("files_tree"),
        git_tree=meta.get("git_tree"),
        total_bytes=meta.get("total_bytes"),
    )


def _sub_path(rel: str | None, name: str) -> tuple[bool, str | None]:
    """Whether a restore of `rel` touches tree `name`, and where: None = all of it,
    a path inside it, or (False, None) when it touches none of it."""
    if rel is None or rel == ".":
        return (True, None)
    inside_git = rel == DOT_GIT or rel.startswith(DOT_GIT + "/")
    if name == GIT:
        return (True, rel[len(DOT_GIT) + 1 :] or None) if inside_git else (False, None)
    return (False, None) if inside_git else (True, rel)


def _real_directory(path: Path) -> None:
    """Make `path` a real directory: a symlink there (`ln -s ~/.ssh .git`) would have
    git write the restored files wherever it points."""
    if path.is_symlink() or (path.exists() and not path.is_dir()):
        path.unlink()
    path.mkdir(parents=True, exist_ok=True)


def _inside(path: Path, root: Path) -> bool:
    real, top = os.path.realpath(path), os.path.realpath(root)
    return real == top or real.startswith(top + os.sep)


def _remove_empty_parents(directory: Path, stop: Path) -> None:
    while directory != stop and stop in directory.parents:
        try:
            directory.rmdir()
        except OSError:
            return
        directory = directory.parent
