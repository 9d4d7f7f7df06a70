"""`herald plugins list|info|enable|disable|remove|new` and plugin `herald <name>` commands
(the plugin check of `herald doctor` is `herald.cli.doctor.check_plugins`)."""

from __future__ import annotations

import os
import shutil
from typing import TYPE_CHECKING, Annotated, Any

import typer

from herald.cli.common import fail, load, refuse_from_tool_call, write_stdout

if TYPE_CHECKING:
    from herald.config import Settings
    from herald.plugins import Candidate, PluginSet

app = typer.Typer(
    help="Plugins: extra tools, hooks, commands, platforms and strategies "
    "($HERALD_HOME/plugins/<name>, ./.herald/plugins with plugins.project, or installed).",
    no_args_is_help=True,
)


def _found(settings: Settings) -> dict[str, Candidate]:
    from herald.plugins import discover

    section = settings.config.plugins
    return discover(
        user_dir=settings.home.plugins_dir,
        project_root=__import__("pathlib").Path.cwd() if section.project else None,
    )


def _loaded(settings: Settings) -> PluginSet:
    from herald.plugins import load_plugins

    return load_plugins(settings.config, settings.home, settings.secrets, cwd=os.getcwd())


def _state(name: str, candidate: Candidate | None, settings: Settings, loaded: PluginSet) -> str:
    section = settings.config.plugins
    for failure in loaded.failures:
        if failure.name == name:
            return f"failed: {failure.message}"
    if name in loaded.loaded:
        return "loaded"
    if name in section.disabled:
        return "disabled"
    if candidate is not None and candidate.problem:
        return f"broken: {candidate.problem}"
    return "available (herald plugins enable " + name + ")"


@app.command("list")
def list_plugins(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
) -> None:
    """Every plugin found, where it comes from and whether it loaded."""
    from herald.cli.tables import Column, print_json, print_table

    settings = load(ctx)
    found = _found(settings)
    loaded = _loaded(settings)
    names = sorted(set(found) | {f.name for f in loaded.failures})
    rows = []
    for name in names:
        candidate = found.get(name)
        manifest = candidate.manifest if candidate is not None else None
        rows.append((
            name,
            manifest.version if manifest else "-",
            candidate.source if candidate else "-",
            _state(name, candidate, settings, loaded),
            manifest.description if manifest else "",
        ))  # fmt: skip
    if as_json:
        keys = ("name", "version", "source", "state", "description")
        print_json({"plugins": [dict(zip(keys, row, strict=True)) for row in rows],
                    "notes": list(loaded.notices)})  # fmt: skip
        return
    if not names:
        write_stdout(
            f"No plugins found. Write one with `herald plugins new NAME` (it lands in "
            f"{settings.home.plugins_dir}), or install a package that provides one.\n"
        )
        return
    columns = [Column("plugin"), Column("version"), Column("source"),
               Column("state", flex=True, fold=True), Column("description", flex=True)]  # fmt: skip
    print_table(columns, rows)
    for notice in loaded.notices:
        write_stdout(f"note: {notice}\n")


@app.command("info")
def info(ctx: typer.Context, name: Annotated[str, typer.Argument(help="plugin name")]) -> None:
    """One plugin: its manifest, where it is, its state and what it registered."""
    settings = load(ctx)
    candidate = _found(settings).get(name)
    if candidate is None:
        fail(f"no plugin named {name!r}; `herald plugins list` shows the ones found")
    loaded = _loaded(settings)
    lines = [f"{name}  ({candidate.source}: {candidate.where})"]
    if candidate.shadowed:
        lines.append(f"  replaces the one from: {', '.join(candidate.shadowed)}")
    manifest = candidate.manifest
    if manifest is not None:
        lines += [
            f"  version:     {manifest.version}",
            f"  description: {manifest.description}",
            f"  provides:    {', '.join(manifest.provides) or '-'}",
            f"  requires:    python {manifest.requires.python or '-'}; "
            f"herald {manifest.requires.herald or 'any'}",
        ]
    lines.append(f"  state:       {_state(name, candidate, settings, loaded)}")
    plugin = loaded.loaded.get(name)
    if plugin is not None:
        got = plugin.contributions
        parts = {
            "tools": [t.name for t in got.tools],
            "hooks": [h.event for h in got.hooks],
            "commands": list(got.commands),
            "slash commands": [f"/{n}" for n in got.slash_commands],
            "platforms": list(got.platforms),
            "memory providers": list(got.memory_providers),
            "context engines": list(got.context_engines),
            "model providers": list(got.model_providers),
        }
        for label, values in parts.items():
            if values:
                lines.append(f"  {label + ':':<13}{', '.join(values)}")
    lines.append(f"  storage:     {settings.home.plugins_dir / '.data' / name}")
    write_stdout("\n".join(lines) + "\n")


def _edit_plugins_config(settings: Settings, change: Any) -> None:
    from herald.config import ConfigError, update_raw

    path = settings.home.config_path

    def edit(data: dict[str, Any]) -> None:
        section = data.setdefault("plugins", {})
        if not isinstance(section, dict):
            raise ConfigError(
                f"plugins in {path} is not a section; fix it with `herald config edit`"
            )
        change(section)

    try:
        update_raw(path, edit)  # re-read under the lock: a concurrent edit is kept
    except ConfigError as exc:
        fail(str(exc))


@app.command("enable")
def enable(ctx: typer.Context, name: Annotated[str, typer.Argument(help="plugin name")]) -> None:
    """Load NAME from now on (adds it to plugins.enabled)."""
    refuse_from_tool_call(f"herald plugins enable {name}")
    settings = load(ctx)
    if name not in _found(settings):
        fail(f"no plugin named {name!r}; `herald plugins list` shows the ones found")

    def change(section: dict[str, Any]) -> None:
        enabled = list(section.get("enabled") or [])
        if name not in enabled:
            enabled.append(name)
        section["enabled"] = enabled
        section["disabled"] = [n for n in section.get("disabled") or [] if n != name]

    _edit_plugins_config(settings, change)
    from herald.plugins import forget_loaded

    forget_loaded()
    loaded: PluginSet = _loaded(load(ctx))
    problem = next((f for f in loaded.failures if f.name == name), None)
    if problem is not None:
        write_stdout(f"enabled {name}, but it does not load: {problem.message}\n")
        raise typer.Exit(1)
    write_stdout(f"enabled {name}; new sessions load it\n")


@app.command("disable")
def disable(ctx: typer.Context, name: Annotated[str, typer.Argument(help="plugin name")]) -> None:
    """Stop loading NAME (bundled plugins too)."""
    settings = load(ctx)
    bundled = getattr(_found(settings).get(name), "source", None) == "bundled"

    def change(section: dict[str, Any]) -> None:
        section["enabled"] = [n for n in section.get("enabled") or [] if n != name]
        if bundled:
            disabled = list(section.get("disabled") or [])
            section["disabled"] = [*disabled, name] if name not in disabled else disabled

    _edit_plugins_config(settings, change)
    write_stdout(f"disabled {name}; new sessions do without it\n")


@app.command("remove")
def remove(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="plugin name")],
    yes: Annotated[bool, typer.Option("--yes", "-y", help="do not ask")] = False,
) -> None:
    """Delete a user plugin's directory and its storage, and stop loading it."""
    from herald.plugins import STORAGE_SUBDIR

    settings = load(ctx)
    candidate = _found(settings).get(name)
    storage = settings.home.plugins_dir / STORAGE_SUBDIR / name
    if candidate is not None and candidate.source != "user":
        how = {
            "installed": f"uninstall its package ({candidate.where}) with pip",
            "project": f"delete {candidate.where} from the project",
            "bundled": f"it ships with Herald; use `herald plugins disable {name}`",
        }[candidate.source]
        fail(f"{name} is a {candidate.source} plugin: {how}")
    if candidate is None and not storage.exists():
        fail(f"no user plugin named {name!r} (nothing under {settings.home.plugins_dir})")
    if not yes and not typer.confirm(f"delete {name} and its stored data?"):
        raise typer.Exit(1)
    if candidate is not None and candidate.path is not None:
        shutil.rmtree(candidate.path)
    if storage.exists():
        shutil.rmtree(storage)
    _edit_plugins_config(
        settings,
        lambda section: section.update(
            enabled=[n for n in section.get("enabled") or [] if n != name]
        ),
    )
    write_stdout(f"removed {name}\n")


@app.command("new")
def new(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="plugin name (letters, digits, - and _)")],
) -> None:
    """Write a working plugin skeleton (a tool, a hook and a test) to start from."""
    from herald.plugins.skeleton import write_skeleton

    refuse_from_tool_call(f"herald plugins new {name}")
    settings = load(ctx)
    try:
        path = write_skeleton(settings.home.plugins_dir, name)
    except (ValueError, FileExistsError) as exc:
        fail(str(exc))
    write_stdout(
        f"wrote {path}/ (plugin.yaml, __init__.py, test_plugin.py)\n"
        f"next: herald plugins enable {name}   then ask Herald to use {name.replace('-', '_')}_echo\n"
        f"test: python -m pytest {path / 'test_plugin.py'}\n"
    )


# ---- `herald <name>` commands plugins add ---------------------------------------------------


def mount_plugin_commands(root: Any, argv: list[str]) -> None:
    """Add the enabled plugins' commands to the click group `root` — only when `argv`
    names a command Herald does not have, so `herald --version` and every built-in
    command load no plugin."""
    import typer.main

    name = _command_name(argv)
    if name is None or name in root.commands:
        return
    try:
        from herald.config import load_settings

        settings = load_settings(_profile(argv))
    except Exception:  # the built-in error path reports config problems
        return
    from herald.plugins import plugins_for

    plugins = plugins_for(settings.config, settings.home, settings.secrets, cwd=os.getcwd())
    registered = plugins.commands.get(name)
    if registered is None:
        return
    command, help_text = registered.factory
    if isinstance(command, typer.Typer):
        click_command = typer.main.get_command(command)
    else:
        single = typer.Typer(add_completion=False)
        single.command(name, help=help_text or None)(command)
        click_command = typer.main.get_command(single)
    click_command.name = name
    root.add_command(click_command, name)


def _command_name(argv: list[str]) -> str | None:
    skip = False
    for token in argv:
        if skip:
            skip = False
            continue
        if token in ("--profile", "-p"):
            skip = True
            continue
        if token.startswith("-"):
            continue
        return token
    return None


def _profile(argv: list[str]) -> str | None:
    for i, token in enumerate(argv):
        if token in ("--profile", "-p") and i + 1 < len(argv):
            return argv[i + 1]
        if token.startswith("--profile="):
            return token.split("=", 1)[1]
    return None
