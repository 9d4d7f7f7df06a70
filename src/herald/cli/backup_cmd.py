"""`herald backup create|verify|restore|list`: the owner's copies of a home
(herald.homes). Restoring, and copying secrets out, are the owner's alone: refused
when an agent's tool call started the command."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from herald.cli.common import err_console, fail, profile_of, refuse_from_tool_call, write_stdout

app = typer.Typer(
    help="Back up a home while Herald runs; verify, list and restore backups.",
    no_args_is_help=True,
)


def _home(ctx: typer.Context):  # -> HeraldHome
    from herald.config import ProfileNameError, resolve_home

    try:
        return resolve_home(profile_of(ctx))
    except (ProfileNameError, OSError) as exc:
        fail(f"cannot use the Herald home: {exc}")


def _say(text: str) -> None:
    err_console().print(text, highlight=False, markup=False)


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{value} {key.replace('_', ' ')}" for key, value in sorted(counts.items()))


@app.command("create")
def create(
    ctx: typer.Context,
    path: Annotated[
        Path | None,
        typer.Argument(help="the new backup's directory (default <home>/backups/herald-backup-…)"),
    ] = None,
    include_secrets: Annotated[
        bool, typer.Option("--include-secrets", help="also copy .env (keep the backup private)")
    ] = False,
    keep: Annotated[
        int | None,
        typer.Option("--keep", min=1, help="then remove all but the newest N in <home>/backups"),
    ] = None,
) -> None:
    """Back up the home (consistent while the gateway runs; .env left out by default)."""
    from herald.homes import BackupError, create_backup, prune_backups, resolve_target

    if include_secrets:
        refuse_from_tool_call("herald backup create --include-secrets")
    home = _home(ctx)
    target = resolve_target(home, path)
    try:
        manifest = create_backup(home, target, include_secrets=include_secrets, progress=_say)
    except BackupError as exc:
        fail(str(exc))
    write_stdout(f"{target}\n")
    _say(f"backed up {len(manifest.files)} files: {_counts(manifest.counts)}")
    if keep is not None:
        for removed in prune_backups(home, keep):
            _say(f"removed the old backup {removed.name}")


@app.command("verify")
def verify(ctx: typer.Context, path: Annotated[Path, typer.Argument(help="a backup")]) -> None:
    """Check every file of a backup against its manifest, and each database's integrity."""
    from herald.homes import verify_backup

    report = verify_backup(path)
    if not report.ok:
        fail(f"{path} is damaged:\n  " + "\n  ".join(report.problems), code=1)
    assert report.manifest is not None
    write_stdout(
        f"{path}: ok ({len(report.manifest.files)} files; {_counts(report.manifest.counts)})\n"
    )


@app.command("restore")
def restore(ctx: typer.Context, path: Annotated[Path, typer.Argument(help="a backup")]) -> None:
    """Restore a backup into this home; a home that is not empty is backed up first."""
    from herald.homes import BackupError, restore_backup

    refuse_from_tool_call(f"herald backup restore {path}")
    try:
        report = restore_backup(path, _home(ctx), progress=_say)
    except BackupError as exc:
        fail(str(exc))
    if report.safety_backup is not None:
        _say(f"the home as it was before is in {report.safety_backup}")
    if report.removed:
        _say(f"removed {len(report.removed)} file(s) the backup did not have")
    write_stdout(f"restored {report.restored} files from {path}\n")


@app.command("list")
def list_cmd(ctx: typer.Context) -> None:
    """The backups in <home>/backups, oldest first."""
    from herald.homes import list_backups

    rows = list_backups(_home(ctx))
    if not rows:
        write_stdout("No backups yet: herald backup create\n")
        return
    lines = []
    for path, manifest, note in rows:
        if manifest is None:
            lines.append(f"{path.name}  unreadable: {note}")
            continue
        secrets = " +secrets" if manifest.data.get("include_secrets") else ""
        lines.append(
            f"{path.name}  {manifest.data.get('created_at', '?')}  herald "
            f"{manifest.data.get('herald_version', '?')}  {_counts(manifest.counts)}{secrets}"
        )
    write_stdout("\n".join(lines) + "\n")
