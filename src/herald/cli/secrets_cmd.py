"""`herald secrets new NAME [--for api|webhook|mcp]`: make a strong random secret,
keep it in the home's `.env` and, with ``--for``, point the entrance's setting at it.

The value never reaches the terminal unless ``--show`` is given (terminals are
logged, shared and screenshotted); it is read from `.env` by whoever needs it.
"""

from __future__ import annotations

import os
import secrets as pysecrets
from enum import StrEnum
from typing import Annotated

import typer

from herald.cli.common import fail, profile_of, write_stdout

app = typer.Typer(
    help="Secrets in the home's .env: make strong ones for the entrances Herald serves.",
    no_args_is_help=True,
)


class Entrance(StrEnum):
    api = "api"
    webhook = "webhook"
    mcp = "mcp"


def new_secret_value() -> str:
    """43 url-safe characters (256 bits). Checked against the rule anyway, so the
    command can never write something the entrances would refuse."""
    from herald.config import secret_problem

    while True:
        value = pysecrets.token_urlsafe(32)
        if secret_problem(value) is None:
            return value


def config_value_for(kind: str, name: str) -> str:
    """What the entrance's setting should hold: a `${NAME}` reference, except for the
    MCP token, whose setting names the secret."""
    return name if kind == "mcp" else f"${{{name}}}"


@app.command("new")
def new(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="the .env name, e.g. HERALD_API_KEY")],
    for_: Annotated[
        Entrance | None,
        typer.Option(
            "--for",
            help="also point this entrance's setting at it (api: gateway.platforms.api.api_key, "
            "webhook: gateway.platforms.webhook.secret, mcp: mcp.serve.token_env)",
        ),
    ] = None,
    show: Annotated[
        bool, typer.Option("--show", help="print the value (to give it to a client)")
    ] = False,
    force: Annotated[
        bool, typer.Option("--force", help="replace an existing value (its users stop working)")
    ] = False,
) -> None:
    """Write a strong random value for NAME into the home's .env (created 0600)."""
    # Imported here: `herald --version` must not load pydantic.
    from herald.config import (
        ENTRANCE_SECRETS,
        ENV_NAME_RE,
        ConfigError,
        ProfileNameError,
        env_file_names,
        resolve_home,
        set_value,
        write_env_value,
    )

    if not ENV_NAME_RE.match(name):
        fail(f"{name!r} is not a valid name: use letters, digits and _, e.g. HERALD_API_KEY")
    try:
        home = resolve_home(profile_of(ctx))
    except ProfileNameError as exc:
        fail(str(exc))
    if name in env_file_names(home.env_path) and not force:
        fail(
            f"{name} is already set in {home.env_path}; --force replaces it (whatever uses "
            "the old value stops working)"
        )
    value = new_secret_value()
    wired = ""
    if for_ is not None:
        setting = ENTRANCE_SECRETS[for_.value].setting
        try:  # the config first: if it cannot take the setting, .env stays as it was
            set_value(home.config_path, setting, config_value_for(for_.value, name))
        except ConfigError as exc:
            fail(str(exc))
        wired = f"; {setting} is now {config_value_for(for_.value, name)}"
    write_env_value(home.env_path, name, value)
    typer.echo(f"wrote a new {name} to {home.env_path} (mode 0600){wired}", err=True)
    if os.environ.get(name):
        typer.echo(
            f"note: {name} is also set in this shell's environment, which wins over .env; "
            f"unset it (unset {name}) before starting Herald",
            err=True,
        )
    if show:
        write_stdout(value + "\n")
    else:
        typer.echo(f"the value is not shown; read it from {home.env_path} or use --show", err=True)
