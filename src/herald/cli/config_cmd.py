"""`herald config show|path|set|edit`."""

from __future__ import annotations

import os
import shlex
import subprocess
from typing import Annotated

import typer

from herald.cli.common import fail, profile_of, refuse_from_tool_call, write_stdout

app = typer.Typer(help="Show and change config.yaml.", no_args_is_help=True)


def _home(ctx: typer.Context):
    from herald.config import ProfileNameError, resolve_home

    try:
        return resolve_home(profile_of(ctx))
    except ProfileNameError as exc:
        fail(str(exc))


@app.command("path")
def path(ctx: typer.Context) -> None:
    """Where config.yaml lives."""
    write_stdout(f"{_home(ctx).config_path}\n")


@app.command("show")
def show(ctx: typer.Context) -> None:
    """The effective configuration (the file's values over the defaults)."""
    import yaml

    from herald.config import ConfigError, load_config

    home = _home(ctx)
    try:
        config = load_config(home.config_path)
    except ConfigError as exc:
        fail(str(exc))
    data = config.model_dump(mode="json")
    header = f"# {home.config_path}{'' if home.config_path.exists() else ' (not created yet: defaults)'}\n"
    write_stdout(header + yaml.safe_dump(data, sort_keys=False, allow_unicode=True))


# `config set agent.max_turns -5`: a value that starts with "-" is a value, not an option.
@app.command("set", context_settings={"ignore_unknown_options": True})
def set_key(
    ctx: typer.Context,
    key: Annotated[str, typer.Argument(help="dotted key, e.g. model.name")],
    value: Annotated[str, typer.Argument(help="value, read as YAML (true, 3, null, text)")],
) -> None:
    """Set one key; the whole file is validated before it is written."""
    from herald.config import ConfigError, set_value
    from herald.safety import is_posture_key

    if is_posture_key(key):
        refuse_from_tool_call(f"herald config set {key} {shlex.quote(value)}")
    home = _home(ctx)
    try:
        set_value(home.config_path, key, value)
    except ConfigError as exc:
        fail(str(exc))
    typer.echo(f"set {key} in {home.config_path}", err=True)


@app.command("edit")
def edit(ctx: typer.Context) -> None:
    """Open config.yaml in $VISUAL / $EDITOR, then validate it."""
    from herald.config import ConfigError, load_config

    refuse_from_tool_call("herald config edit")
    home = _home(ctx)
    if not home.config_path.exists():
        home.config_path.write_text(
            "# Herald configuration. See `herald config show` for every key and its default.\n",
            encoding="utf-8",
        )
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    try:
        subprocess.run([*shlex.split(editor), str(home.config_path)], check=False)
    except FileNotFoundError:
        fail(f"editor {editor!r} not found: set $EDITOR, or edit {home.config_path} directly")
    try:
        load_config(home.config_path)
    except ConfigError as exc:
        fail(f"{exc}\nThe file was saved; run `herald config edit` again to fix it.")
    typer.echo("config is valid", err=True)
