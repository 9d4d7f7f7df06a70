"""`herald sandbox explain`: what isolates the commands of a session started here."""

from __future__ import annotations

import os
import textwrap
from typing import Annotated

import typer

from herald.cli.common import load, write_stdout

app = typer.Typer(
    help="See how commands are isolated (terminal.backend: local, ssh, bwrap, docker).",
    no_args_is_help=True,
)

EXIT_SANDBOX_UNAVAILABLE = 1


@app.command("explain")
def explain(
    ctx: typer.Context,
    check: Annotated[
        bool, typer.Option("--check/--no-check", help="start the sandbox once to prove it works")
    ] = True,
) -> None:
    """Print the backend, mounts and their modes, network, limits and the approval
    policy for the current profile and directory."""
    from herald.environments import explain_terminal

    settings = load(ctx)
    cwd = os.getcwd()
    result = explain_terminal(settings.config, cwd, check=check)
    profile = settings.home.profile or "default"
    lines = [f"Where commands run for profile {profile} in {cwd}:"]
    width = max(len(label) for label, _ in result.rows) + 2
    for label, text in result.rows:
        wrapped = textwrap.wrap(
            text, 96 - width, break_on_hyphens=False, break_long_words=False
        ) or [""]
        lines.append(f"  {label + ':':<{width}}{wrapped[0]}")
        lines += [f"  {'':<{width}}{more}" for more in wrapped[1:]]
    write_stdout("\n".join(lines) + "\n")
    if not result.ok:
        raise typer.Exit(EXIT_SANDBOX_UNAVAILABLE)
