"""The tools array sent to the model, computed once per configuration and cached.

The key is (registry, profile, surface bundle or explicit names, enabled,
disabled, registry generation, config fingerprint): registering a tool or
changing the config gives a fresh entry, anything else is a cache hit. The
cache is a small LRU shared by every agent in the process. Callers always get
a deep copy, so appending to or editing the list never corrupts the cache.
"""

from __future__ import annotations

import copy
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from herald.tools.toolsets import CheckCache, available_tool_names

if TYPE_CHECKING:
    from herald.config import HeraldConfig, Secrets
    from herald.tools.registry import ToolRegistry

log = logging.getLogger(__name__)

DEFINITIONS_CACHE_SIZE = 16


@dataclass(frozen=True)
class ToolSelection:
    names: tuple[str, ...]
    definitions: list[dict[str, Any]]


class DefinitionsCache:
    def __init__(self, maxsize: int = DEFINITIONS_CACHE_SIZE):
        self.maxsize = maxsize
        self._entries: OrderedDict[Hashable, ToolSelection] = OrderedDict()
        self._lock = threading.Lock()
        self.builds = 0  # how many times a selection was computed (for tests and stats)

    def get(self, key: Hashable, build: Callable[[], ToolSelection]) -> ToolSelection:
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
        if entry is None:
            entry = build()
            with self._lock:
                self.builds += 1
                self._entries[key] = entry
                self._entries.move_to_end(key)
                while len(self._entries) > self.maxsize:
                    self._entries.popitem(last=False)
        return ToolSelection(entry.names, copy.deepcopy(entry.definitions))

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)


definitions_cache = DefinitionsCache()


def select_tools(
    registry: ToolRegistry,
    config: HeraldConfig | None,
    *,
    bundle: str = "herald-cli",
    explicit: tuple[str, ...] | None = None,
    profile: str = "default",
    secrets: Secrets | None = None,
    check_cache: CheckCache | None = None,
    cache: DefinitionsCache | None = None,
) -> ToolSelection:
    """The tool names and definitions a surface exposes (a copy the caller owns).

    `explicit` replaces the bundle with those tool names (config `enabled` is not
    added, `disabled` still applies). Raises `ToolsetError` for unknown toolsets."""
    section = config.toolsets if config is not None else None
    # A per-agent overlay (MCP servers) may append tools after the bundle's, sorted, so
    # they never move the built-ins' prefix; explicit tool lists stay exactly as asked.
    appended = tuple(registry.appended_tool_names()) if explicit is None else ()
    key = (
        registry,
        appended,
        profile,
        bundle if explicit is None else ("explicit", *explicit),
        tuple(section.enabled) if section is not None else (),
        tuple(section.disabled) if section is not None else (),
        registry.generation,
        config.fingerprint() if config is not None else "",
    )

    def build() -> ToolSelection:
        if explicit is not None:
            missing = sorted(n for n in set(explicit) if registry.offer(n) is None)
            if missing:
                log.warning("requested tools are not registered: %s", ", ".join(missing))
        names = available_tool_names(
            bundle,
            config,
            registry,
            secrets=secrets,
            cache=check_cache,
            explicit_tools=explicit,
        )
        if appended:
            extra = available_tool_names(
                bundle,
                config,
                registry,
                secrets=secrets,
                cache=check_cache,
                explicit_tools=appended,
            )
            names += [n for n in extra if n not in names]
        return ToolSelection(tuple(names), registry.definitions(names))

    return (cache if cache is not None else definitions_cache).get(key, build)
