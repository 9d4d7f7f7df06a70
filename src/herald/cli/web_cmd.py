"""`herald web token|status`: the web chat's login token and where the page is served."""

from __future__ import annotations

import typer

from herald.cli.common import load, refuse_from_tool_call, write_stdout

app = typer.Typer(help="The web chat and dashboard (gateway.platforms.web).", no_args_is_help=True)


@app.command("token")
def token(ctx: typer.Context) -> None:
    """Create a new login token (replaces the old one); it is shown once, only its hash
    is stored."""
    from herald.gateway.platforms.web import create_token, token_path

    refuse_from_tool_call("herald web token")
    settings = load(ctx)
    value = create_token(settings.home.root)
    web = settings.config.gateway.platforms.web
    write_stdout(
        f"{value}\n\n"
        f"This is your web chat login token; it is shown only now (its hash is in "
        f"{token_path(settings.home.root)}).\n"
        f"Page: http://{web.host}:{web.port}{web.base_path.rstrip('/')}/ once "
        "`herald gateway run` serves it"
        + (
            ""
            if web.enabled
            else " (enable it: herald config set gateway.platforms.web.enabled true)"
        )
        + ".\n"
    )


@app.command("status")
def status(ctx: typer.Context) -> None:
    """Say whether the web chat is enabled, where it listens and whether a token exists."""
    from herald.gateway.platforms.web import token_path

    settings = load(ctx)
    web = settings.config.gateway.platforms.web
    has_token = token_path(settings.home.root).is_file()
    write_stdout(
        f"web chat: {'enabled' if web.enabled else 'disabled'}\n"
        f"address:  http://{web.host}:{web.port}{web.base_path.rstrip('/')}/\n"
        f"token:    {'set' if has_token else 'none yet (run `herald web token`)'}\n"
    )
