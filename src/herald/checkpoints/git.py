"""Real `git`, run against a shadow repository and never against the project's own.

Every call names the shadow `GIT_DIR`, a work tree and an index explicitly, and runs
with an environment that keeps the user's git out: no system or global config, a
HOME inside the shadow directory, no inherited `GIT_*` variables (a project's hook
or a hijacked shell could set them), no hooks, no fsmonitor and no filters or
line-ending conversion, so what is stored is the bytes on disk.
"""

from __future__ import annotations

import functools
import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

GIT_TIMEOUT_SECONDS = 600.0  # a first snapshot of a large tree hashes every file

# $GIT_DIR/info/attributes outranks every .gitattributes in the work tree: a project's
# `* text eol=crlf` or `filter=lfs` must not change what a checkpoint stores or restores.
NEUTRAL_ATTRIBUTES = "* -text -filter -ident -working-tree-encoding -merge -export-subst\n"

SHADOW_CONFIG = (
    ("core.bare", "false"),
    ("core.autocrlf", "false"),
    ("core.safecrlf", "false"),
    ("core.symlinks", "true"),
    ("core.fileMode", "true"),
    ("core.hooksPath", os.devnull),
    ("core.fsmonitor", "false"),
    ("core.untrackedCache", "false"),
    ("core.excludesFile", os.devnull),
    ("core.quotePath", "false"),
    ("gc.auto", "0"),  # prune decides when objects go, never a background gc
    ("commit.gpgSign", "false"),
    ("user.name", "Herald checkpoints"),
    ("user.email", "checkpoints@herald.invalid"),
)


class GitError(RuntimeError):
    """A git command failed; the message carries its stderr."""


@functools.cache  # asked before every change; git does not come and go within a process
def git_available() -> bool:
    try:
        subprocess.run(["git", "--version"], capture_output=True, check=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return False
    return True


class ShadowGit:
    """`git` bound to one shadow repository (`git_dir`)."""

    def __init__(self, git_dir: Path):
        self.git_dir = git_dir

    def env(self, work_tree: Path | None, index: Path | None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        env.update(
            GIT_DIR=str(self.git_dir),
            GIT_CONFIG_NOSYSTEM="1",
            GIT_CONFIG_GLOBAL=os.devnull,
            GIT_TERMINAL_PROMPT="0",
            GIT_OPTIONAL_LOCKS="0",
            HOME=str(self.git_dir),
            XDG_CONFIG_HOME=str(self.git_dir),
            LC_ALL="C",
        )
        if work_tree is not None:
            env["GIT_WORK_TREE"] = str(work_tree)
        if index is not None:
            env["GIT_INDEX_FILE"] = str(index)
        return env

    def run(
        self,
        args: Sequence[str],
        *,
        work_tree: Path | None = None,
        index: Path | None = None,
        stdin: bytes | None = None,
        check: bool = True,
    ) -> bytes:
        cwd = work_tree if work_tree is not None and work_tree.is_dir() else self.git_dir
        try:
            proc = subprocess.run(
                ["git", *args],
                input=stdin,
                capture_output=True,
                env=self.env(work_tree, index),
                cwd=cwd,
                timeout=GIT_TIMEOUT_SECONDS,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            raise GitError(f"git {args[0]} could not run: {exc}") from None
        if check and proc.returncode != 0:
            message = proc.stderr.decode("utf-8", "replace").strip()
            raise GitError(f"git {args[0]} failed: {message}")
        return proc.stdout

    def text(self, args: Sequence[str], **kwargs: object) -> str:
        return self.run(args, **kwargs).decode("utf-8", "surrogateescape").strip()  # type: ignore[arg-type]

    def init(self) -> None:
        """Create the shadow repository once (owner-only: it holds copies of `.env`s)."""
        if (self.git_dir / "HEAD").exists():
            return
        self.git_dir.mkdir(parents=True, exist_ok=True)
        os.chmod(self.git_dir, 0o700)
        self.run(["init", "--quiet", "--bare", str(self.git_dir)])
        for key, value in SHADOW_CONFIG:
            self.run(["config", key, value])
        info = self.git_dir / "info"
        info.mkdir(exist_ok=True)
        (info / "attributes").write_text(NEUTRAL_ATTRIBUTES, encoding="utf-8")
        (info / "exclude").write_text("", encoding="utf-8")
        hooks = self.git_dir / "hooks"
        for sample in hooks.glob("*") if hooks.is_dir() else ():
            sample.unlink()
