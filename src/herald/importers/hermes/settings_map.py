"""config.yaml, .env and SOUL.md of a hermes home → Herald's.

Only keys with a real counterpart are carried over, and never one that lowers Herald's
security posture (an imported home is untrusted: ``approvals.mode: off`` stays a
line in the summary for the owner to decide). A key Herald's config already sets is
kept as it is, which also makes a second run change nothing. Secrets are copied into
Herald's ``.env`` only with ``--secrets``; their values are never printed.
"""

from __future__ import annotations

from typing import Any

import yaml

from herald.importers.hermes.items import Run
from herald.importers.hermes.reader import UnsafeSource

_PROVIDERS = {"openai": "openai", "anthropic": "anthropic", "openrouter": "openrouter",
              "custom": "custom"}  # fmt: skip
_KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY",
            "openrouter": "OPENROUTER_API_KEY", "custom": "CUSTOM_API_KEY"}  # fmt: skip
_DEFAULT_SOUL_START = "You are Hermes Agent, an intelligent AI assistant created by Nous Research"


def _mapped(raw: dict[str, Any]) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """(Herald dotted key -> value, [(hermes key, why it is not carried over)])."""
    out: dict[str, Any] = {}
    left: list[tuple[str, str]] = []
    model = raw.get("model")
    if isinstance(model, str) and model:
        out["model.name"] = model
    elif isinstance(model, dict):
        provider = model.get("provider")
        if provider in _PROVIDERS:
            out["model.provider"] = _PROVIDERS[provider]
        elif provider:
            left.append((f"model.provider: {provider}", "no such provider in Herald"))
        for hermes_key, herald_key in (("default", "model.name"), ("base_url", "model.base_url")):
            if isinstance(model.get(hermes_key), str) and model[hermes_key]:
                out[herald_key] = model[hermes_key]
        if model.get("api_key"):
            left.append(("model.api_key", "a secret: imported into .env with --secrets"))
        for key in sorted(set(model) - {"provider", "default", "base_url", "api_key"}):
            left.append((f"model.{key}", "no counterpart in Herald"))
    approvals = raw.get("approvals")
    if isinstance(approvals, dict):
        mode = approvals.get("mode")
        if mode in ("manual", "smart"):
            out["approvals.mode"] = mode
        elif mode is not None:
            left.append((f"approvals.mode: {mode}", "would lower Herald's approvals; set it "
                         "yourself with herald config set approvals.mode"))  # fmt: skip
        deny = approvals.get("deny")
        if isinstance(deny, list) and all(isinstance(d, str) for d in deny) and deny:
            out["approvals.deny"] = deny  # only ever refuses more
    agent = raw.get("agent")
    if isinstance(agent, dict) and isinstance(agent.get("max_turns"), int):
        out["agent.max_iterations"] = agent["max_turns"]
    telegram = raw.get("telegram")
    if isinstance(telegram, dict) and telegram.get("allowed_users"):
        left.append(("telegram.allowed_users", "who may talk to Herald is the owner's to set: "
                     "herald config set gateway.platforms.telegram.allowed_users"))  # fmt: skip
    handled = {"model", "approvals", "agent", "telegram"}
    for key in sorted(k for k in raw if k not in handled):
        left.append((str(key), "no counterpart in Herald"))
    return out, left


def _get(data: dict[str, Any], dotted: str) -> Any:
    node: Any = data
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def import_config(run: Run) -> None:
    from herald.config import ConfigError, read_raw, update_raw, validate

    try:
        raw = yaml.safe_load(run.source.read_text("config.yaml")) or {}
    except (OSError, UnsafeSource, yaml.YAMLError) as exc:
        run.add("config", "config.yaml", "skip", f"unreadable: {exc}")
        return
    if not isinstance(raw, dict):
        run.add("config", "config.yaml", "skip", "not a mapping")
        return
    mapped, left = _mapped(raw)
    model = raw.get("model")
    if run.secrets and isinstance(model, dict) and model.get("api_key"):
        # the key goes into .env under this name (import_secrets); Herald must look there
        mapped["model.api_key_env"] = _KEY_ENV.get(str(model.get("provider")), "CUSTOM_API_KEY")
        left = [(k, why) for k, why in left if k != "model.api_key"]
    path = run.settings.home.config_path
    current = read_raw(path)
    wanted: dict[str, Any] = {}
    for key, value in mapped.items():
        have = _get(current, key)
        if have == value:
            run.add("config", f"{key} = {value!r}", "already")
        elif have is not None:
            run.add("config", key, "skip", f"Herald already sets it to {have!r} (kept)")
        else:
            wanted[key] = value
    if wanted:

        def merge(data: dict[str, Any]) -> dict[str, Any]:
            for key, value in wanted.items():
                node = data
                *parents, last = key.split(".")
                for part in parents:
                    node = node.setdefault(part, {})
                node[last] = value
            validate(path, data)
            return data

        try:
            if not run.dry_run:
                update_raw(path, merge)
            else:
                merge(dict(current))
            for key, value in wanted.items():
                run.add("config", f"{key} = {value!r}", "import")
        except ConfigError as exc:
            run.add("config", ", ".join(wanted), "skip", f"Herald refused the values: {exc}")
    for key, why in left:
        run.add("config", key, "skip", why)


def _env_pairs(text: str) -> list[tuple[str, str]]:
    from herald.config import ENV_NAME_RE

    out = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        name, _, value = line.removeprefix("export ").partition("=")
        name, value = name.strip(), value.strip().strip("'\"")
        if ENV_NAME_RE.match(name) and value and "\n" not in value:
            out.append((name, value))
    return out


def import_secrets(run: Run) -> None:
    from herald.config import Secrets, write_env_value

    pairs: list[tuple[str, str]] = []
    try:
        pairs = _env_pairs(run.source.read_text(".env"))
    except FileNotFoundError:
        pass
    except (OSError, UnsafeSource) as exc:
        run.add("secrets", ".env", "skip", f"unreadable: {exc}")
    try:
        model = yaml.safe_load(run.source.read_text("config.yaml")) or {}
    except (OSError, UnsafeSource, yaml.YAMLError):
        model = {}
    model = model.get("model") if isinstance(model, dict) else None
    if isinstance(model, dict) and isinstance(model.get("api_key"), str) and model["api_key"]:
        env = _KEY_ENV.get(str(model.get("provider")), "CUSTOM_API_KEY")
        pairs.append((env, model["api_key"]))
    if not pairs:
        return
    if not run.secrets:
        names = ", ".join(sorted({n for n, _ in pairs}))
        run.add("secrets", f"{len(pairs)} secret(s): {names}", "skip", "use --secrets to copy them")
        return
    existing = Secrets(run.settings.home.env_path)
    for name, value in pairs:
        if existing.get(name) == value:
            run.add("secrets", name, "already")
        elif existing.get(name):
            run.add("secrets", name, "skip", "Herald's .env already sets it (kept)")
        else:
            if not run.dry_run:
                write_env_value(run.settings.home.env_path, name, value)
            run.add("secrets", name, "import")


def import_soul(run: Run) -> None:
    from herald.safety import scan_text

    try:
        text = run.source.read_text("SOUL.md")
    except FileNotFoundError:
        return
    except (OSError, UnsafeSource) as exc:
        run.add("soul", "SOUL.md", "skip", f"unreadable: {exc}")
        return
    target = run.settings.home.soul_path
    mine = target.read_text(encoding="utf-8") if target.exists() else ""
    if text.strip().startswith(_DEFAULT_SOUL_START):
        run.add("soul", "SOUL.md", "skip", "hermes's default persona; Herald keeps its own")
    elif mine.strip() == text.strip():
        run.add("soul", "SOUL.md", "already")
    elif mine.strip():
        run.add("soul", "SOUL.md", "skip", f"Herald already has one ({target}); kept")
    elif scan_text(text, kind="memory").blocked:
        run.add("soul", "SOUL.md", "skip", "the injection scan flagged it; read it yourself")
    else:
        if not run.dry_run:
            from herald.config.shared_file import atomic_write

            atomic_write(target, text)
        run.add("soul", "SOUL.md", "import")
