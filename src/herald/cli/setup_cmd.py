"""`herald setup`: choose a real provider, store its key in `.env` and its settings in
`config.yaml`. Interactive by default; every answer can also be given as a flag."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from herald.cli.common import fail, profile_of, refuse_from_tool_call
from herald.config.secrets import write_env_value

PROVIDERS = ("openai", "anthropic", "openrouter", "custom", "local")
KEY_NAMES = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
}


def setup(
    ctx: typer.Context,
    provider: Annotated[str | None, typer.Option(help=", ".join(PROVIDERS))] = None,
    model: Annotated[str | None, typer.Option(help="model name (empty = provider default)")] = None,
    base_url: Annotated[str | None, typer.Option(help="API base URL (custom servers)")] = None,
    api_key: Annotated[
        str | None, typer.Option(help="API key to store in .env ('-' reads it from stdin)")
    ] = None,
) -> None:
    """Configure the model provider Herald uses."""
    import sys

    from herald.config import (
        ConfigError,
        ProfileNameError,
        resolve_home,
        update_raw,
    )

    refuse_from_tool_call("herald setup")
    try:
        home = resolve_home(profile_of(ctx))
    except ProfileNameError as exc:
        fail(str(exc))
    interactive = sys.stdin.isatty() and provider is None
    if provider is None:
        if not interactive:
            fail("--provider is required when not run in a terminal")
        provider = typer.prompt(f"Provider ({', '.join(PROVIDERS)})", default="openai")
    if provider not in PROVIDERS:
        fail(f"unknown provider {provider!r}: use one of {', '.join(PROVIDERS)}")
    if provider == "custom" and base_url is None:
        if not interactive:
            fail("--base-url is required for a custom provider (e.g. http://localhost:11434/v1)")
        base_url = typer.prompt("Base URL", default="http://localhost:11434/v1")
    if model is None and interactive and provider != "local":
        model = typer.prompt("Model name (Enter for the provider's default)", default="") or None
    if provider == "custom" and not model:
        fail("a custom provider needs a model name: pass --model NAME")

    key_name = KEY_NAMES.get(provider)
    if api_key == "-":
        api_key = sys.stdin.readline().strip()
    if key_name and api_key is None and interactive:
        api_key = (
            typer.prompt(
                f"{key_name} (Enter to keep the current one)",
                default="",
                hide_input=True,
                show_default=False,
            )
            or None
        )

    def set_model(data: dict[str, Any]) -> None:
        section = data.setdefault("model", {})
        if not isinstance(section, dict):
            raise ConfigError(f"config error in {home.config_path}: 'model' is not a section")
        section["provider"] = provider
        for key, value in (("name", model), ("base_url", base_url)):
            if value:
                section[key] = value
            elif key == "base_url" and provider != "custom":
                section.pop(key, None)

    try:
        update_raw(home.config_path, set_model)  # re-read under the lock: concurrent edits stay
    except ConfigError as exc:
        fail(str(exc))
    if key_name and api_key:
        write_env_value(home.env_path, key_name, api_key)
    typer.echo(f"saved provider {provider} in {home.config_path}", err=True)
    if key_name and api_key:
        typer.echo(f"saved {key_name} in {home.env_path}", err=True)
    typer.echo("check it with: herald doctor", err=True)
