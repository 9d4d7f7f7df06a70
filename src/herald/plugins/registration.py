"""`PluginContext`: the ``ctx`` a plugin's ``register(ctx)`` receives.

Everything a plugin registers is collected on its own `Contributions`; the
loader takes them only when ``register`` returned without an error, so a
plugin that fails halfway leaves nothing behind.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from herald.config.shared_file import update_shared_file
from herald.plugins.hooks import Hook, check_event

R = TypeVar("R")

if TYPE_CHECKING:
    from herald.config import Secrets
    from herald.tools import ToolSpec


class PluginStorageError(OSError):
    """A plugin storage path that would lead outside the plugin's own folder."""


_NAME_RE = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")


@dataclass(frozen=True)
class SlashCommand:
    """``/name ARG`` on every surface: ``handler(arg=..., session_id=..., surface=...)``
    (it is given the keywords it names) returns the text of the answer."""

    name: str
    handler: Callable[..., str]
    help: str
    plugin: str

    @property
    def usage(self) -> str:
        return f"/{self.name} [ARG]"


@dataclass(frozen=True)
class Registered:
    """One named thing a plugin registered (a platform, an engine, a transport, ...)."""

    name: str
    factory: Any
    plugin: str


@dataclass
class Contributions:
    tools: list[ToolSpec] = field(default_factory=list)
    hooks: list[Hook] = field(default_factory=list)
    commands: dict[str, Registered] = field(default_factory=dict)
    slash_commands: dict[str, SlashCommand] = field(default_factory=dict)
    platforms: dict[str, Registered] = field(default_factory=dict)
    memory_providers: dict[str, Registered] = field(default_factory=dict)
    context_engines: dict[str, Registered] = field(default_factory=dict)
    model_providers: dict[str, Registered] = field(default_factory=dict)


class PluginContext:
    def __init__(
        self,
        name: str,
        *,
        storage_root: Path,
        config: Any,
        secrets: Secrets | None,
        hook_order: Callable[[], int],
    ) -> None:
        self.name = name
        self.config = config  # the plugin's validated section (its CONFIG_SCHEMA), or a dict
        self._storage_root = storage_root
        self._secrets = secrets
        self._hook_order = hook_order
        self.contributions = Contributions()

    # ---- what the plugin may use ----------------------------------------------------------

    @property
    def storage(self) -> Path:
        """This plugin's own directory under the home (created on first use; removed by
        `herald plugins remove`). Refused (`PluginStorageError`) when it, or the folder
        holding it, is a symlink: a link planted there would carry every write elsewhere."""
        root = self._storage_root
        path = root / self.name
        root.mkdir(parents=True, exist_ok=True)
        path.mkdir(exist_ok=True)
        for link in (root, path):
            if link.is_symlink():
                raise PluginStorageError(
                    f"plugin {self.name!r}: its storage {link} is a symlink (to "
                    f"{os.path.realpath(link)}); remove it, Herald will make a real folder"
                )
        return path

    def storage_file(self, name: str | Path) -> Path:
        """The path of `name` inside this plugin's storage, for names that come from
        outside (a tool argument the model chose): an absolute path, ``..``, or a symlink
        that leads out of the folder is refused with `PluginStorageError`. Folders on the
        way are created."""
        base = self.storage
        rel = Path(name)
        if not str(name).strip() or rel.is_absolute() or ".." in rel.parts:
            raise PluginStorageError(
                f"plugin {self.name!r}: {str(name)!r} is not a name inside its storage "
                "(no absolute paths, no '..')"
            )
        path = base / rel
        real = Path(os.path.realpath(path))  # checked before any folder is made on the way
        if not real.is_relative_to(Path(os.path.realpath(base))) or path.is_symlink():
            raise PluginStorageError(
                f"plugin {self.name!r}: {name} leads outside its storage ({real}) through a "
                "symlink; refused"
            )
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    def update_file(
        self, relative: str, transform: Callable[[str | None], tuple[str | None, R]]
    ) -> R:
        """Read-modify-write a file in `storage` that other Herald processes running this
        plugin may write too: `transform` gets its text (None when missing) and returns
        the new text (None: no write) and a result. Locked, re-read, compare-and-swapped
        and replaced atomically (`herald.config.shared_file`), so no update is lost."""
        parts = Path(relative).parts
        if not parts or Path(relative).is_absolute() or ".." in parts:
            raise ValueError(f"{relative!r} must be a relative path inside the plugin's storage")
        return update_shared_file(self.storage / relative, transform)

    def secrets(self, name: str) -> str | None:
        """A secret from the home's .env or the environment (the one secrets accessor)."""
        return self._secrets.get(name) if self._secrets is not None else None

    # ---- tools ---------------------------------------------------------------------------------

    def register_tool(self, tool: ToolSpec | Callable[..., Any], **declare: Any) -> ToolSpec:
        """Add a tool: a `ToolSpec` made with `herald.tools.tool`, or a typed function
        ``fn(ctx, arg: type, ...) -> str`` declared here the same way (``declare`` takes
        `tool`'s keywords; the toolset defaults to ``plugin-<name>``)."""
        from herald.tools import ToolSpec
        from herald.tools import tool as declare_tool

        if isinstance(tool, ToolSpec):
            spec = tool
        else:
            declare.setdefault("toolset", f"plugin-{self.name}")
            spec = declare_tool(**declare)(tool)
        self.contributions.tools.append(spec)
        return spec

    def register_toolset(
        self, name: str, tools: list[ToolSpec | Callable[..., Any]]
    ) -> list[ToolSpec]:
        """Add several tools as toolset `name` (name it in toolsets.enabled/disabled)."""
        import dataclasses

        from herald.tools import ToolSpec

        out = []
        for item in tools:
            if isinstance(item, ToolSpec):
                spec = dataclasses.replace(item, toolset=name)
                self.contributions.tools.append(spec)
            else:
                spec = self.register_tool(item, toolset=name)
            out.append(spec)
        return out

    # ---- hooks and commands ----------------------------------------------------------------

    def register_hook(self, event: str, fn: Callable[..., Any], priority: int = 0) -> None:
        """Call `fn` at `event` (see `herald.plugins.hooks` for the events and returns)."""
        check_event(event)
        self.contributions.hooks.append(Hook(event, fn, self.name, priority, self._hook_order()))

    def register_command(self, name: str, command: Any, help: str = "") -> None:
        """A ``herald NAME`` subcommand: a `typer.Typer` or a function typer can wrap."""
        _check_name(name, "command")
        self.contributions.commands[name] = Registered(name, (command, help), self.name)

    def register_slash_command(
        self, name: str, handler: Callable[..., str], help: str = ""
    ) -> None:
        _check_name(name, "slash command")
        self.contributions.slash_commands[name] = SlashCommand(
            name, handler, help or f"from plugin {self.name}", self.name
        )

    # ---- platforms and strategies ------------------------------------------------------------

    def register_platform(self, name: str, factory: Callable[..., Any]) -> None:
        """A gateway adapter: ``factory(settings=..., config=...)`` returns a
        `herald.gateway.PlatformAdapter`; it runs when the gateway starts."""
        _check_name(name, "platform")
        self.contributions.platforms[name] = Registered(name, factory, self.name)

    def register_memory_provider(self, name: str, factory: Callable[[], Any]) -> None:
        """An external memory (`herald.memory.MemoryProvider`); active when
        ``memory.provider`` names it."""
        _check_name(name, "memory provider")
        self.contributions.memory_providers[name] = Registered(name, factory, self.name)

    def register_context_engine(self, name: str, factory: Callable[..., Any]) -> None:
        """A `herald.context.ContextEngine`; active when ``context.engine`` names it."""
        _check_name(name, "context engine")
        self.contributions.context_engines[name] = Registered(name, factory, self.name)

    def register_model_provider(self, api_mode: str, factory: Callable[..., Any]) -> None:
        """A transport for a new API shape: ``factory(endpoint, api_key, *, timeout)``
        returns a `herald.providers.ProviderTransport`."""
        _check_name(api_mode, "model provider api mode")
        self.contributions.model_providers[api_mode] = Registered(api_mode, factory, self.name)


def _check_name(name: str, what: str) -> None:
    if not isinstance(name, str) or not _NAME_RE.match(name):
        raise ValueError(
            f"{what} name {name!r} must be lower case letters, digits, - or _ (at most 32)"
        )


__all__ = ["Contributions", "PluginContext", "PluginStorageError", "Registered", "SlashCommand"]
