"""The `herald` command: wiring of subcommands (each lives in its own module)."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

import herald.cli.backup_cmd as backup_cmd
import herald.cli.checkpoints_cmd as checkpoints_cmd
import herald.cli.config_cmd as config_cmd
import herald.cli.cron_cmd as cron_cmd
import herald.cli.gateway_cmd as gateway_cmd
import herald.cli.import_cmd as import_cmd
import herald.cli.kanban_cmd as kanban_cmd
import herald.cli.mcp_cmd as mcp_cmd
import herald.cli.pairing_cmd as pairing_cmd
import herald.cli.plugins_cmd as plugins_cmd
import herald.cli.sandbox_cmd as sandbox_cmd
import herald.cli.secrets_cmd as secrets_cmd
import herald.cli.sessions_cmd as sessions_cmd
import herald.cli.skills_cmd as skills_cmd
import herald.cli.usage_cmd as usage_cmd
import herald.cli.web_cmd as web_cmd
from herald import __version__
from herald.cli.common import fail, load, open_store, resolve_session_id
from herald.cli.doctor import doctor
from herald.cli.setup_cmd import setup

HELP = (
    "Herald, a personal AI agent. Run `herald` to chat, `herald chat -q TEXT` for one turn. "
    "With no provider configured it uses a tiny offline demo model (SmolLM2-135M): fine for "
    "trying Herald out, not a capable assistant — see `herald setup` or the README."
)

app = typer.Typer(
    help=HELP,
    add_completion=False,
    no_args_is_help=False,
    pretty_exceptions_enable=False,
)
app.add_typer(sessions_cmd.app, name="sessions")
app.add_typer(config_cmd.app, name="config")
app.add_typer(skills_cmd.app, name="skills")
app.add_typer(gateway_cmd.app, name="gateway")
app.add_typer(pairing_cmd.app, name="pairing")
app.add_typer(web_cmd.app, name="web")
app.add_typer(kanban_cmd.app, name="kanban")
app.add_typer(mcp_cmd.app, name="mcp")
app.command("acp")(mcp_cmd.acp)
app.add_typer(sandbox_cmd.app, name="sandbox")
app.add_typer(cron_cmd.app, name="cron")
app.add_typer(plugins_cmd.app, name="plugins")
app.add_typer(secrets_cmd.app, name="secrets")
app.add_typer(checkpoints_cmd.app, name="checkpoints")
app.add_typer(backup_cmd.app, name="backup")
app.add_typer(import_cmd.app, name="import")
app.command("doctor")(doctor)
app.command("setup")(setup)
app.command("usage")(usage_cmd.usage)


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"herald {__version__}")
        raise typer.Exit()


@app.callback(invoke_without_command=True)
def root(
    ctx: typer.Context,
    profile: Annotated[
        str | None,
        typer.Option("--profile", "-p", help="use profiles/NAME as the home (or HERALD_PROFILE)"),
    ] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="log to stderr")] = False,
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version_callback, is_eager=True, help="print version"),
    ] = False,
) -> None:
    ctx.obj = {"profile": profile, "verbose": verbose}
    if ctx.invoked_subcommand is None:
        _chat_repl(ctx, resume=None, max_iterations=None)


def _chat_repl(ctx: typer.Context, *, resume: str | None, max_iterations: int | None) -> None:
    from herald.cli.repl import Repl

    if not sys.stdin.isatty():
        fail('the interactive chat needs a terminal; for one turn use: herald chat -q "TEXT"')
    settings = load(ctx)
    with open_store(settings) as store:
        session_id = resolve_session_id(store, resume)
        Repl(settings, store, resume=session_id, max_iterations=max_iterations).run()


@app.command()
def chat(
    ctx: typer.Context,
    query: Annotated[
        str | None, typer.Option("--query", "-q", help="run one turn with TEXT and exit")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the turn result as JSON")] = False,
    image: Annotated[
        list[str] | None,
        typer.Option("--image", "-i", help="attach an image file to -q TEXT (repeatable)"),
    ] = None,
    audio: Annotated[
        str | None,
        typer.Option("--audio", help="a voice note: its transcript is the message (or follows -q)"),
    ] = None,
    speech_out: Annotated[
        str | None,
        typer.Option("--speech-out", help="where a spoken reply is written (see voice.reply)"),
    ] = None,
    resume: Annotated[
        str | None,
        typer.Option(
            "--resume", "-r", help="continue a session (its id, or the start or end of it)"
        ),
    ] = None,
    max_iterations: Annotated[
        int | None,
        typer.Option(
            "--max-iterations", "--max-turns", min=1, help="model calls allowed this turn"
        ),
    ] = None,
    model: Annotated[str | None, typer.Option("--model", "-m", help="model name")] = None,
    provider: Annotated[
        str | None,
        typer.Option(help="openai, anthropic, openrouter, custom or local"),
    ] = None,
) -> None:
    """Chat interactively, or run one turn with -q."""
    from herald.cli.oneshot import run_oneshot

    ctx.find_root().obj["overrides"] = {"model": model, "provider": provider}
    if query is None and audio is None:
        if as_json:
            fail("--json needs -q TEXT")
        if image:
            fail("--image needs -q TEXT (in the chat, attach one with /image PATH)")
        _chat_repl(ctx, resume=resume, max_iterations=max_iterations)
        return
    settings = load(ctx)
    code = run_oneshot(
        settings,
        query or "",
        as_json=as_json,
        resume=resume,
        max_iterations=max_iterations,
        images=image or (),
        audio=audio,
        speech_out=speech_out,
    )
    raise typer.Exit(code)


def run() -> None:
    from herald.cli.invocation import hoist_global_options, tidy_help

    command = typer.main.get_command(app)
    argv = hoist_global_options(sys.argv[1:])
    plugins_cmd.mount_plugin_commands(command, argv)  # only for a name Herald does not know
    tidy_help(command)
    if not (sys.stdout.isatty() and sys.stderr.isatty()):
        # In a pipe or a log, usage errors and help are plain text: no panels drawn in
        # box characters, no colour codes.
        _plain(command)
    command(args=argv)


def _plain(command: object) -> None:
    """No rich formatting for `command` and everything under it."""
    if hasattr(command, "rich_markup_mode"):
        command.rich_markup_mode = None
    for sub in (getattr(command, "commands", None) or {}).values():
        _plain(sub)
