"""Plugins (L2): extend Herald with tools, hooks, commands, platforms and strategies
without touching its code, and without one plugin breaking the rest.

A plugin is a directory (or an installed package's module, entry-point group
``herald.plugins``) with ``plugin.yaml`` and ``register(ctx)``; see
`herald.plugins.discovery` for where they are found, `herald.plugins.loader`
for how one failing plugin is disabled with one message, `PluginContext` for
what ``register`` may add and `herald.plugins.hooks` for the hook events.
Capabilities stack (tools, hooks, platforms); strategies are exclusive and
chosen in config (``memory.provider``, ``context.engine``).
"""

from typing import TYPE_CHECKING

from herald.lazy import lazy_exports

if TYPE_CHECKING:  # for type checkers; at run time each name loads on first use
    from herald.plugins.discovery import (
        BUNDLED_DIR,
        ENTRY_POINT_GROUP,
        PROJECT_SUBDIR,
        Candidate,
        discover,
    )
    from herald.plugins.hooks import HOOK_EVENTS, NO_HOOKS, Deny, Hook, HookRunner
    from herald.plugins.loader import (
        STORAGE_SUBDIR,
        LoadedPlugin,
        PluginFailure,
        PluginSet,
        forget_loaded,
        load_plugins,
        plugins_for,
    )
    from herald.plugins.manifest import MANIFEST, ManifestError, PluginManifest, read_manifest
    from herald.plugins.registration import (
        PluginContext,
        PluginStorageError,
        Registered,
        SlashCommand,
    )
    from herald.plugins.tools import PluginToolOverlay, namespaced

_EXPORTS: dict[str, tuple[str, ...]] = {
    "herald.plugins.discovery": (
        "BUNDLED_DIR",
        "ENTRY_POINT_GROUP",
        "PROJECT_SUBDIR",
        "Candidate",
        "discover",
    ),
    "herald.plugins.hooks": (
        "HOOK_EVENTS",
        "NO_HOOKS",
        "Deny",
        "Hook",
        "HookRunner",
    ),
    "herald.plugins.loader": (
        "STORAGE_SUBDIR",
        "LoadedPlugin",
        "PluginFailure",
        "PluginSet",
        "forget_loaded",
        "load_plugins",
        "plugins_for",
    ),
    "herald.plugins.manifest": (
        "MANIFEST",
        "ManifestError",
        "PluginManifest",
        "read_manifest",
    ),
    "herald.plugins.registration": (
        "PluginContext",
        "PluginStorageError",
        "Registered",
        "SlashCommand",
    ),
    "herald.plugins.tools": (
        "PluginToolOverlay",
        "namespaced",
    ),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "BUNDLED_DIR",
    "ENTRY_POINT_GROUP",
    "HOOK_EVENTS",
    "MANIFEST",
    "NO_HOOKS",
    "PROJECT_SUBDIR",
    "STORAGE_SUBDIR",
    "Candidate",
    "Deny",
    "Hook",
    "HookRunner",
    "LoadedPlugin",
    "ManifestError",
    "PluginContext",
    "PluginFailure",
    "PluginManifest",
    "PluginSet",
    "PluginStorageError",
    "PluginToolOverlay",
    "Registered",
    "SlashCommand",
    "discover",
    "forget_loaded",
    "load_plugins",
    "namespaced",
    "plugins_for",
    "read_manifest",
]
