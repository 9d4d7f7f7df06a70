"""Loading the chosen plugins into a `PluginSet`, one plugin's failure never the others'.

A plugin loads when it is bundled or named in ``plugins.enabled``, and is not in
``plugins.disabled``. For each: requirements and Herald version are checked,
the module is imported, its ``CONFIG_SCHEMA`` (a pydantic model, optional)
validates ``plugins.config.<name>``, and ``register(ctx)`` runs. The import and
``register`` each run on a daemon thread limited to ``plugins.register_timeout_seconds``
(a plugin that hangs must not hang start-up; what it registers late is never used).
Any failure disables that plugin with one message — which plugin, what failed, what to do —
kept on the set (`herald doctor` and `herald plugins list` show them) and
logged; Herald runs on without it.

`plugins_for()` caches one set per home, plugin config and project directory,
so every agent of a process shares the imported modules and registrations.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import sys
import threading
from dataclasses import dataclass, field
from itertools import count
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from herald.plugins.discovery import BUNDLED_DIR, Candidate, discover
from herald.plugins.hooks import HookRunner, run_limited
from herald.plugins.manifest import PluginManifest, unmet_requirements
from herald.plugins.registration import Contributions, PluginContext, Registered, SlashCommand
from herald.plugins.tools import PluginToolOverlay

if TYPE_CHECKING:
    from herald.config import HeraldConfig, HeraldHome, Secrets
    from herald.tools import ToolRegistry, ToolSpec

log = logging.getLogger(__name__)

STORAGE_SUBDIR = ".data"  # $HERALD_HOME/plugins/.data/<name>: each plugin's own files


@dataclass(frozen=True)
class PluginFailure:
    name: str
    source: str
    where: str
    message: str

    def __str__(self) -> str:
        return f"plugin {self.name!r} ({self.source}, {self.where}) is disabled: {self.message}"


@dataclass(frozen=True)
class LoadedPlugin:
    name: str
    source: str
    where: str
    manifest: PluginManifest
    contributions: Contributions


@dataclass
class PluginSet:
    loaded: dict[str, LoadedPlugin] = field(default_factory=dict)
    failures: list[PluginFailure] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    tools: list[ToolSpec] = field(default_factory=list)
    hooks: HookRunner = field(default_factory=HookRunner)
    commands: dict[str, Registered] = field(default_factory=dict)
    slash_commands: dict[str, SlashCommand] = field(default_factory=dict)
    platforms: dict[str, Registered] = field(default_factory=dict)
    memory_providers: dict[str, Registered] = field(default_factory=dict)
    context_engines: dict[str, Registered] = field(default_factory=dict)
    model_providers: dict[str, Registered] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _noted: set[str] = field(default_factory=set, repr=False)
    _announced: set[str] = field(default_factory=set, repr=False)

    def __bool__(self) -> bool:
        return bool(self.loaded)

    def note(self, message: str) -> None:
        """Record a notice once (a clash, a refused registration), logged as a warning."""
        with self._lock:
            if message in self._noted:
                return
            self._noted.add(message)
            self.notices.append(message)
        log.warning("%s", message)

    def messages(self) -> list[str]:
        """What a user should hear about: each disabled plugin, then the notices."""
        return [str(f) for f in self.failures] + list(self.notices)

    def unannounced(self) -> list[str]:
        """`messages()` not handed out before (a process says each one once)."""
        with self._lock:
            fresh = [m for m in self.messages() if m not in self._announced]
            self._announced.update(fresh)
        return fresh

    def tool_registry(self, registry: ToolRegistry) -> ToolRegistry:
        """`registry` with the plugin tools over it (offered after the bundle's tools,
        sorted; a name taken by a built-in or an earlier plugin tool becomes
        ``<plugin>__<tool>``); `registry` itself when there are none or it has them."""
        if not self.tools:
            return registry
        return PluginToolOverlay.build(registry, self._tools_by_plugin(), self.note)

    def _tools_by_plugin(self) -> list[tuple[str, ToolSpec]]:
        """(plugin name, tool) for every registered tool, in registration order."""
        owners: dict[int, str] = {}
        for name, loaded in self.loaded.items():
            for spec in loaded.contributions.tools:
                owners.setdefault(id(spec), name)
        return [(owners.get(id(spec), "?"), spec) for spec in self.tools]

    def context_engine_factories(self, builtin: list[str]) -> dict[str, Any]:
        """The plugins' context engines for `create_engine`; one named like a built-in
        engine is refused (the built-in wins) and said once."""
        out: dict[str, Any] = {}
        for key, registered in self.context_engines.items():
            if key in builtin:
                self.note(
                    f"context engine {key!r} of plugin {registered.plugin!r} refused: Herald "
                    "has a built-in engine of that name; the plugin must use another name"
                )
                continue
            out[key] = registered.factory
        return out

    def memory_provider(self, config: HeraldConfig) -> Any | None:
        """A new instance of the provider ``memory.provider`` names, if a plugin has it."""
        chosen = config.memory.provider
        for name, registered in self.memory_providers.items():
            if name != chosen:
                self.note(
                    f"memory provider {name!r} of plugin {registered.plugin!r} is not active: "
                    f"memory.provider is {chosen or 'unset'!r} and Herald runs at most one "
                    f"external memory provider; set memory.provider: {name} to use it"
                )
        registered = self.memory_providers.get(chosen) if chosen else None
        if registered is None:
            return None
        from herald.memory import MemoryProvider, MemoryProviderError

        try:
            provider = registered.factory()
        except Exception as exc:
            raise MemoryProviderError(
                f"memory provider {chosen!r} of plugin {registered.plugin!r} could not be "
                f"created: {type(exc).__name__}: {exc}"
            ) from exc
        if not isinstance(provider, MemoryProvider):
            raise MemoryProviderError(
                f"plugin {registered.plugin!r}: memory provider {chosen!r} is a "
                f"{type(provider).__name__}, not a herald.memory.MemoryProvider"
            )
        return provider


def _herald_version() -> str:
    from herald import __version__

    return __version__


def load_plugins(
    config: HeraldConfig,
    home: HeraldHome,
    secrets: Secrets | None = None,
    *,
    cwd: str | Path | None = None,
    bundled_dir: Path = BUNDLED_DIR,
    herald_version: str | None = None,
) -> PluginSet:
    """Load the plugins `config` chooses; never raises for a plugin's fault."""
    section = config.plugins
    project_root = Path(cwd) if section.project and cwd is not None else None
    found = discover(user_dir=home.plugins_dir, project_root=project_root, bundled_dir=bundled_dir)
    plugins = PluginSet(hooks=HookRunner(timeout=section.hook_timeout_seconds))
    version = herald_version or _herald_version()
    hook_order = count().__next__
    for name in section.enabled:
        if name not in found and name not in section.disabled:
            where = "project" if section.project else "user or installed"
            plugins.failures.append(
                PluginFailure(
                    name,
                    "config",
                    "plugins.enabled",
                    f"no {where} plugin of that name was found (looked in {home.plugins_dir}"
                    + (f", {project_root}/.herald/plugins" if project_root else "")
                    + " and installed packages); check the name with `herald plugins list`",
                )
            )
    for name, candidate in found.items():
        wanted = candidate.source == "bundled" or name in section.enabled
        if not wanted or name in section.disabled:
            continue
        failure = _load_one(candidate, plugins, config, home, secrets, version, hook_order)
        if failure is not None:
            plugins.failures.append(failure)
            log.warning("%s", failure)
    return plugins


def _load_one(
    candidate: Candidate,
    plugins: PluginSet,
    config: HeraldConfig,
    home: HeraldHome,
    secrets: Secrets | None,
    version: str,
    hook_order: Any,
) -> PluginFailure | None:
    def failed(message: str) -> PluginFailure:
        return PluginFailure(candidate.name, candidate.source, candidate.where, message)

    if candidate.problem is not None or candidate.manifest is None:
        return failed(f"{candidate.problem}; fix plugin.yaml")
    manifest = candidate.manifest
    unmet = unmet_requirements(manifest, version)
    if unmet is not None:
        return failed(unmet)
    limit = config.plugins.register_timeout_seconds
    slow = (
        f"did not finish within {limit:g} s (plugins.register_timeout_seconds), so it was "
        "disabled and Herald started without it; fix the plugin, raise the limit or "
        f"`herald plugins disable {candidate.name}`"
    )
    imported = run_limited(lambda: _import(candidate), {}, limit, name="herald-plugin-import")
    if imported.timed_out:
        return failed(f"importing it {slow}")
    if imported.error is not None:
        exc = imported.error
        log.debug("importing plugin %s failed", candidate.name, exc_info=exc)
        return failed(
            f"it failed to import ({type(exc).__name__}: {exc}); fix the plugin or remove "
            f"it from plugins.enabled"
        )
    module, register = imported.value
    if not callable(register):
        return failed("it has no register(ctx) function; add one to its __init__.py")
    raw = config.plugins.config.get(candidate.name, {})
    schema = getattr(module, "CONFIG_SCHEMA", None) if module is not None else None
    section: Any = raw
    if schema is not None:
        try:
            section = schema.model_validate(raw)
        except Exception as exc:
            return failed(
                f"plugins.config.{candidate.name} is invalid ({_one_line(exc)}); "
                "fix that section of config.yaml"
            )
    ctx = PluginContext(
        candidate.name,
        storage_root=home.plugins_dir / STORAGE_SUBDIR,
        config=section,
        secrets=secrets,
        hook_order=hook_order,
    )
    registered = run_limited(lambda: register(ctx), {}, limit, name="herald-plugin-register")
    if registered.timed_out:
        return failed(f"register(ctx) {slow}")
    if registered.error is not None:
        exc = registered.error
        log.debug("register() of plugin %s failed", candidate.name, exc_info=exc)
        return failed(
            f"register(ctx) raised {type(exc).__name__}: {exc}; fix the plugin or remove it "
            "from plugins.enabled"
        )
    _merge(plugins, candidate, manifest, ctx.contributions)
    return None


def _import(candidate: Candidate) -> tuple[ModuleType | None, Any]:
    if candidate.entry_point is not None:
        target = candidate.entry_point.load()
        if isinstance(target, ModuleType):
            return target, getattr(target, "register", None)
        return sys.modules.get(getattr(target, "__module__", "")), target
    assert candidate.path is not None
    path = candidate.path.resolve()
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:10]
    module_name = f"herald_plugin_{candidate.name.replace('-', '_')}_{digest}"
    module = sys.modules.get(module_name)
    if module is None:
        spec = importlib.util.spec_from_file_location(
            module_name, path / "__init__.py", submodule_search_locations=[str(path)]
        )
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot import {path}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            sys.modules.pop(module_name, None)
            raise
    return module, getattr(module, "register", None)


def _merge(
    plugins: PluginSet, candidate: Candidate, manifest: PluginManifest, got: Contributions
) -> None:
    name = candidate.name
    plugins.loaded[name] = LoadedPlugin(name, candidate.source, candidate.where, manifest, got)
    undeclared = _undeclared(got, list(manifest.provides))
    if undeclared:
        plugins.note(
            f"plugin {name!r} registers {', '.join(undeclared)} but its plugin.yaml `provides` "
            "does not list them; add them so `herald plugins info` tells the truth"
        )
    plugins.tools.extend(got.tools)
    plugins.hooks.hooks = (*plugins.hooks.hooks, *got.hooks)
    for table, what in (
        ("commands", "command"),
        ("slash_commands", "slash command"),
        ("platforms", "platform"),
        ("memory_providers", "memory provider"),
        ("context_engines", "context engine"),
        ("model_providers", "model provider"),
    ):
        mine: dict[str, Any] = getattr(plugins, table)
        for key, value in getattr(got, table).items():
            earlier = mine.get(key)
            if earlier is not None:
                plugins.note(
                    f"{what} {key!r} of plugin {name!r} refused: plugin {earlier.plugin!r} "
                    f"already registered {key!r}; disable one of them (plugins.disabled)"
                )
                continue
            mine[key] = value
    _install_strategies(plugins, name, got)


def _undeclared(got: Contributions, provides: list[str]) -> list[str]:
    """The `provides` kinds a plugin registered without listing them (none are checked
    when it lists nothing)."""
    if not provides:
        return []
    present = {
        "tools": bool(got.tools),
        "hooks": bool(got.hooks),
        "commands": bool(got.commands),
        "slash_commands": bool(got.slash_commands),
        "platforms": bool(got.platforms),
        "memory_provider": bool(got.memory_providers),
        "context_engine": bool(got.context_engines),
        "model_provider": bool(got.model_providers),
    }
    listed = set(provides) | ({"tools"} if "toolsets" in provides else set())
    return [kind for kind, here in present.items() if here and kind not in listed]


def _install_strategies(plugins: PluginSet, name: str, got: Contributions) -> None:
    """Transports go on the providers' registry by api mode (chosen in config); a
    built-in api mode is refused. Context engines stay on the set: each agent offers
    its own plugins' engines to `create_engine` (see `PluginSet.context_engine_factories`)."""
    from herald.providers import register_transport, transport_modes

    for key, registered in got.model_providers.items():
        if plugins.model_providers.get(key) is not registered:
            continue
        if key in transport_modes(builtin_only=True):
            plugins.note(
                f"model provider {key!r} of plugin {name!r} refused: it is a built-in API "
                "mode; the plugin must use another name"
            )
            del plugins.model_providers[key]
            continue
        register_transport(key, registered.factory)


def _one_line(exc: Exception) -> str:
    return " ".join(str(exc).split())[:300]


# ---- the cache surfaces use ----------------------------------------------------------------

_cache: dict[tuple[str, ...], PluginSet] = {}
_cache_lock = threading.Lock()


def plugins_for(
    config: HeraldConfig,
    home: HeraldHome,
    secrets: Secrets | None = None,
    *,
    cwd: str | Path | None = None,
) -> PluginSet:
    """The plugin set for this home and config, loaded on first use and then shared."""
    section = config.plugins
    if not section.enabled and not _has_bundled():
        return _EMPTY
    key = (
        str(home.root),
        json.dumps(section.model_dump(), sort_keys=True, default=str),
        str(Path(cwd).resolve()) if section.project and cwd is not None else "",
        str(getattr(secrets, "env_file", None)),
    )
    with _cache_lock:
        cached = _cache.get(key)
        if cached is None:
            cached = _cache[key] = load_plugins(config, home, secrets, cwd=cwd)
    return cached


def _has_bundled() -> bool:
    return BUNDLED_DIR.is_dir() and any(
        (p / "plugin.yaml").is_file() for p in BUNDLED_DIR.iterdir() if p.is_dir()
    )


def forget_loaded() -> None:
    """Drop cached sets (after `herald plugins enable` in the same process, tests)."""
    with _cache_lock:
        _cache.clear()


_EMPTY = PluginSet()

__all__ = [
    "STORAGE_SUBDIR",
    "LoadedPlugin",
    "PluginFailure",
    "PluginSet",
    "forget_loaded",
    "load_plugins",
    "plugins_for",
]
