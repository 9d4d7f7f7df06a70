"""`herald import hermes [--from PATH] [--dry-run] [--secrets]`: move into Herald from a
hermes-agent home (herald.importers.hermes). The owner's alone: an import changes
config, skills, memory and (with --secrets) secrets, so a tool call cannot start it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from herald.cli.common import fail, load, refuse_from_tool_call, write_stdout

app = typer.Typer(help="Import from another agent's home.", no_args_is_help=True)


@app.command("hermes")
def hermes(
    ctx: typer.Context,
    source: Annotated[
        Path | None,
        typer.Option(
            "--from", help="the hermes home (default ~/.hermes; a profile: …/profiles/NAME)"
        ),
    ] = None,
    dry_run: Annotated[
        bool,
        typer.Option("--dry-run", help="print what would be imported and skipped, write nothing"),
    ] = False,
    secrets: Annotated[
        bool, typer.Option("--secrets", help="also copy API keys and tokens into Herald's .env")
    ] = False,
) -> None:
    """Import config, memories, skills, sessions and cron jobs (paused) from hermes-agent."""
    from herald.importers.hermes import ImportSourceError, default_source, import_hermes, summary

    if not dry_run:
        refuse_from_tool_call("herald import hermes")
    settings = load(ctx)
    try:
        run = import_hermes(source or default_source(), settings, dry_run=dry_run, secrets=secrets)
    except ImportSourceError as exc:
        fail(str(exc))
    write_stdout(summary(run) + "\n")
