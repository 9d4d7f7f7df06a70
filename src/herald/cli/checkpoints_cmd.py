"""`herald checkpoints list|diff|restore|prune`: the snapshots taken before tools changed
a workdir (herald.checkpoints), for the owner at a shell."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from herald.cli.common import fail, load, write_stdout

app = typer.Typer(
    help="Undo file changes: list, diff, restore and prune the checkpoints of a workdir.",
    no_args_is_help=True,
)

WorkdirOption = Annotated[
    Path | None,
    typer.Option("--workdir", "-C", help="the workdir (default: the current directory)"),
]
NumberArgument = Annotated[int, typer.Argument(min=1, help="checkpoint number (1 = newest)")]
PathOption = Annotated[str | None, typer.Option("--path", help="only this file or directory")]


def _store(ctx: typer.Context, workdir: Path | None):  # -> CheckpointStore
    from herald.checkpoints import store_for, workdir_refusal

    settings = load(ctx)
    where = str(workdir or os.getcwd())
    why = workdir_refusal(where, settings.home.root)
    if why is not None:
        fail(f"no checkpoints for {where}: {why}")
    return store_for(settings.home.root, where, settings.config.checkpoints)


@app.command("list")
def list_checkpoints(ctx: typer.Context, workdir: WorkdirOption = None) -> None:
    """The checkpoints of the workdir, newest first: time, turn, tool, files."""
    from herald.checkpoints import list_text

    write_stdout(list_text(_store(ctx, workdir), limit=1000) + "\n")


@app.command("diff")
def diff(
    ctx: typer.Context,
    number: NumberArgument = 1,
    path: PathOption = None,
    workdir: WorkdirOption = None,
) -> None:
    """What changed between checkpoint N and the workdir now."""
    from herald.checkpoints import CheckpointError

    try:
        text = _store(ctx, workdir).diff(number, path=path)
    except CheckpointError as exc:
        fail(str(exc))
    write_stdout((text or "No differences.") + "\n")


@app.command("restore")
def restore(
    ctx: typer.Context,
    number: NumberArgument = 1,
    path: PathOption = None,
    clean: Annotated[
        bool, typer.Option("--clean", help="also remove files created since the checkpoint")
    ] = False,
    workdir: WorkdirOption = None,
) -> None:
    """Bring checkpoint N back; the state before becomes checkpoint 1 (restore it to undo)."""
    from herald.checkpoints import CheckpointError, restore_text

    try:
        result = _store(ctx, workdir).restore(number, path=path, clean=clean)
    except CheckpointError as exc:
        fail(str(exc))
    write_stdout(restore_text(result, path) + "\n")


@app.command("prune")
def prune(
    ctx: typer.Context,
    keep_last: Annotated[
        int | None, typer.Option(min=1, help="default: checkpoints.keep_last")
    ] = None,
    keep_days: Annotated[
        float | None, typer.Option(min=0, help="default: checkpoints.keep_days")
    ] = None,
) -> None:
    """Drop checkpoints beyond the newest N per workdir that are older than D days."""
    from herald.checkpoints import CheckpointError, GitError, checkpoint_root, store_for

    settings = load(ctx)
    config = settings.config.checkpoints
    root = checkpoint_root(settings.home.root)
    total = 0
    for marker in sorted(root.glob("*/WORKDIR")) if root.is_dir() else []:
        workdir = marker.read_text(encoding="utf-8", errors="surrogateescape")
        store = store_for(settings.home.root, workdir, config)
        try:
            dropped = store.prune(
                keep_last=keep_last or config.keep_last,
                keep_days=config.keep_days if keep_days is None else keep_days,
            )
        except (CheckpointError, GitError) as exc:
            write_stdout(f"{workdir}: could not prune ({exc})\n")
            continue
        total += dropped
        if dropped:
            write_stdout(f"{workdir}: dropped {dropped} checkpoint(s)\n")
    write_stdout(f"Pruned {total} checkpoint(s).\n")
