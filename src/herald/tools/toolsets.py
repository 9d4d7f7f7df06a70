"""Toolsets: which registered tools a surface exposes to the model.

A toolset is a named list of tools plus `includes` (other toolsets, resolved
recursively; a cycle simply ends with the union of what it reached). A toolset
also holds every tool that registered under its name, so a plugin's toolset
exists as soon as its tools register. `all` and `*` mean every registered tool.

`core` is shared by every surface; each surface has a bundle:
`herald-cli`, `herald-api`, `herald-cron` (core + file + terminal + web) and
`herald-webhook`, deliberately narrow: core plus the web readers only. A
webhook's text comes from outside, so it gets no file access (reading `.env`
or the home would be an exfiltration path) and nothing with side effects.

Config `toolsets.enabled` adds toolsets or tools; `toolsets.disabled` hides
them. Disabling a bundle (a toolset with includes, or `all`) removes only its
non-core tools; disabling `core`, a leaf toolset or a tool by name removes
exactly that. A name that is neither a toolset nor a known tool is an error
naming the known toolsets. Availability comes last: a tool whose
`requires_env` secrets are missing or whose `check_fn` says no (cached 30 s)
never reaches the model.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from herald.tools.registry import ToolContext

if TYPE_CHECKING:
    from herald.config import HeraldConfig, Secrets
    from herald.tools.offers import Offered
    from herald.tools.registry import ToolRegistry

log = logging.getLogger(__name__)

ALL_ALIASES = frozenset({"all", "*"})
CORE = "core"
DEFAULT_BUNDLE = "herald-cli"
CHECK_TTL_SECONDS = 30.0


@dataclass(frozen=True)
class Toolset:
    name: str
    description: str = ""
    tools: tuple[str, ...] = ()
    includes: tuple[str, ...] = ()

    @property
    def is_bundle(self) -> bool:
        return bool(self.includes)


_FULL = ("core", "file", "terminal", "web")

BUILTIN_TOOLSETS: dict[str, Toolset] = {
    t.name: t
    for t in (
        Toolset(
            "core",
            "shared by every interactive surface",
            (
                "todo",
                "clarify",
                "memory",
                "session_search",
                "skills_list",
                "skill_view",
                "skill_manage",
            ),
        ),
        # What even an untrusted webhook turn may use: nothing that writes, asks a human
        # or reads the owner's history.
        Toolset("core-readonly", "side-effect-free basics", ("todo", "skills_list", "skill_view")),
        Toolset("todo", "the session task list", ("todo",)),
        Toolset("clarify", "ask the user a question", ("clarify",)),
        Toolset(
            "file",
            "read, write, patch and search files",
            (
                "read_file",
                "write_file",
                "patch",
                "search_files",
            ),
        ),
        Toolset("terminal", "run commands and manage processes", ("terminal", "process")),
        Toolset("web", "search the web and read pages", ("web_search", "web_extract")),
        # Only the web readers, whatever else registers under "web" later.
        Toolset(
            "web-read",
            "search the web and read pages, nothing else",
            (
                "web_search",
                "web_extract",
            ),
        ),
        Toolset(
            "kanban",
            "read the task board, post tasks and report on the task being worked",
            (
                "kanban_show",
                "kanban_list",
                "kanban_create",
                "kanban_link",
                "kanban_comment",
                "kanban_heartbeat",
                "kanban_block",
                "kanban_unblock",
                "kanban_request_review",
                "kanban_complete",
                "kanban_attach",
            ),
        ),
        Toolset("herald-kanban-worker", "a board worker", includes=(*_FULL, "kanban")),
        Toolset("cronjob", "create and manage scheduled jobs", ("cronjob",)),
        Toolset("delegation", "hand work to sub-agents", ("delegate_task",)),
        Toolset(
            "herald-cli", "the interactive terminal", includes=(*_FULL, "cronjob", "delegation")
        ),
        Toolset("chat", "send files to the chat the conversation is in", ("send_file",)),
        # Chat platforms (Telegram, Discord, Slack, email, Signal, Matrix): the terminal's tools
        # and the chat's own (the gateway alone registers them).
        Toolset("herald-chat", "gateway chat platforms", includes=("herald-cli", "chat")),
        Toolset("herald-api", "the HTTP API", includes=(*_FULL, "cronjob", "delegation")),
        # Fresh sub-agents; herald.delegation still removes what a child may never call.
        Toolset("herald-delegate", "sub-agents", includes=(*_FULL, "delegation")),
        Toolset("herald-cron", "scheduled jobs", includes=_FULL),
        # The offline demo model chats without tools by default (a 135M model calls any
        # tool it is offered, even for "hello"); `toolsets.enabled: [herald-local]`
        # gives it the read-only bundle below.
        Toolset("herald-local-chat", "the offline demo model: conversation only"),
        # The offline demo model is too small to be trusted with writes or commands.
        Toolset(
            "herald-local",
            "the offline demo model: reading only",
            ("read_file", "search_files"),
            includes=("core-readonly", "web-read"),
        ),
        Toolset(
            "herald-webhook",
            "webhooks: read-only, no side effects",
            includes=(
                "core-readonly",
                "web-read",
            ),
        ),
    )
}


class ToolsetError(ValueError):
    """A toolset or tool name that does not exist, or a bad custom toolset."""


class ToolsetTable:
    """Built-in toolsets, custom ones from config, and the registry's own toolset names."""

    def __init__(
        self,
        registry: ToolRegistry,
        custom: Mapping[str, Toolset] | None = None,
        builtins: Mapping[str, Toolset] = BUILTIN_TOOLSETS,
    ):
        self.registry = registry
        self.sets: dict[str, Toolset] = dict(builtins)
        for name, toolset in (custom or {}).items():
            if name in builtins or name in ALL_ALIASES:
                raise ToolsetError(f"custom toolset {name!r} reuses a built-in name; rename it")
            self.sets[name] = toolset
        self.registered = registry.toolsets()

    def known(self) -> list[str]:
        return sorted(set(self.sets) | set(self.registered))

    def known_tools(self) -> set[str]:
        names = set(self.registry.names())
        for toolset in self.sets.values():
            names.update(toolset.tools)
        return names

    def is_toolset(self, name: str) -> bool:
        return name in self.sets or name in self.registered or name in ALL_ALIASES

    def is_bundle(self, name: str) -> bool:
        return name in ALL_ALIASES or (name in self.sets and self.sets[name].is_bundle)

    def expand(self, name: str, *, where: str = "") -> list[str]:
        """Tool names reached from `name` (a toolset, alias or tool), in order."""
        if name in ALL_ALIASES:
            return self.registry.names()
        if self.is_toolset(name):
            out: list[str] = []
            self._walk(name, set(), out)
            return out
        if name in self.known_tools():
            return [name]
        raise self.unknown(name, where)

    def _walk(self, name: str, visiting: set[str], out: list[str]) -> None:
        if name in visiting:
            return  # a cycle: what was reached so far is the answer
        visiting.add(name)
        toolset = self.sets.get(name)
        members = list(toolset.tools) if toolset else []
        members += self.registered.get(name, [])
        for tool in members:
            if tool not in out:
                out.append(tool)
        for included in toolset.includes if toolset else ():
            if included in ALL_ALIASES:
                out.extend(t for t in self.registry.names() if t not in out)
            elif self.is_toolset(included):
                self._walk(included, visiting, out)
            else:
                raise self.unknown(included, f"included by toolset {name!r}")

    def unknown(self, name: str, where: str) -> ToolsetError:
        place = f" ({where})" if where else ""
        return ToolsetError(
            f"unknown toolset {name!r}{place}; known toolsets: {', '.join(self.known())} "
            "(or all, *, or a tool name)"
        )


def resolve_toolset(
    names: Iterable[str],
    registry: ToolRegistry,
    *,
    enabled: Iterable[str] = (),
    disabled: Iterable[str] = (),
    custom: Mapping[str, Toolset] | None = None,
) -> list[str]:
    """The registered tools `names` + `enabled` reach, minus `disabled`, in order.

    Raises `ToolsetError` for a name that is neither a toolset nor a tool."""
    table = ToolsetTable(registry, custom)
    ordered: list[str] = []
    for name in names:
        _merge(ordered, table.expand(name, where="requested"))
    for name in enabled:
        _merge(ordered, table.expand(name, where="toolsets.enabled"))
    return remove_disabled(ordered, table, disabled)


def remove_disabled(
    tools: Iterable[str], table: ToolsetTable, disabled: Iterable[str]
) -> list[str]:
    """`tools` that are registered and not hidden by `disabled`, in order."""
    removed: set[str] = set()
    for name in disabled:
        hidden = set(table.expand(name, where="toolsets.disabled"))
        if table.is_bundle(name):
            hidden -= set(table.expand(CORE))  # a bundle's core tools stay
        removed |= hidden
    return [t for t in tools if t not in removed and table.registry.offer(t) is not None]


def _merge(into: list[str], tools: Iterable[str]) -> None:
    for tool in tools:
        if tool not in into:
            into.append(tool)


class CheckCache:
    """`check_fn` results, each kept for `ttl` seconds (an injectable clock for tests)."""

    def __init__(self, ttl: float = CHECK_TTL_SECONDS, clock: Callable[[], float] = time.monotonic):
        self.ttl = ttl
        self.clock = clock
        self._values: dict[tuple[Callable[..., bool], str], tuple[bool, float]] = {}
        self._lock = threading.Lock()

    def check(self, fn: Callable[[ToolContext], bool], ctx: ToolContext, tool: str = "") -> bool:
        """`fn(ctx)`, cached per function and per (profile, config, secrets file): two
        profiles in one process never share an answer."""
        key = (fn, _context_key(ctx))
        now = self.clock()
        with self._lock:
            cached = self._values.get(key)
        if cached is not None and now - cached[1] < self.ttl:
            return cached[0]
        try:
            value = bool(fn(ctx))
        except Exception as exc:  # a broken check means "not available", not a crash
            log.warning("availability check for %s failed: %s", tool or fn, exc)
            value = False
        with self._lock:
            self._values[key] = (value, now)
        return value

    def clear(self) -> None:
        with self._lock:
            self._values.clear()


default_check_cache = CheckCache()


def _context_key(ctx: ToolContext) -> str:
    config = ctx.config.fingerprint() if ctx.config is not None else "-"
    env_file = getattr(ctx.secrets, "env_file", None)
    home = ctx.home.root if ctx.home is not None else "-"
    return f"{home}|{config}|{env_file}|{id(ctx.secrets)}"


def is_available(
    spec: Offered,
    secrets: Secrets | None,
    cache: CheckCache | None = None,
    config: HeraldConfig | None = None,
) -> bool:
    """Every `requires_env` secret is set (through the secrets accessor) and `check_fn`,
    given this profile's config and secrets, agrees."""
    for name in spec.requires_env:
        if secrets is None or not secrets.get(name):
            return False
    if spec.check_fn is not None:
        ctx = ToolContext(config=config, secrets=secrets)
        return (cache if cache is not None else default_check_cache).check(
            spec.check_fn, ctx, spec.name
        )
    return True


def custom_toolsets(config: HeraldConfig | None) -> dict[str, Toolset]:
    if config is None:
        return {}
    return {
        name: Toolset(name, "from config", tuple(c.tools), tuple(c.includes))
        for name, c in config.toolsets.custom.items()
    }


def available_tool_names(
    surface_bundle: str,
    config: HeraldConfig | None,
    registry: ToolRegistry,
    *,
    secrets: Secrets | None = None,
    cache: CheckCache | None = None,
    explicit_tools: Iterable[str] | None = None,
) -> list[str]:
    """What the model may call on a surface: the bundle resolved with the config's
    enabled/disabled lists, then filtered by availability. `explicit_tools` (tool
    names) replaces the bundle and config `enabled`; `disabled` still applies."""
    section = config.toolsets if config is not None else None
    disabled = section.disabled if section is not None else ()
    custom = custom_toolsets(config)
    if explicit_tools is not None:
        resolved = remove_disabled(explicit_tools, ToolsetTable(registry, custom), disabled)
    else:
        resolved = resolve_toolset(
            [surface_bundle],
            registry,
            enabled=section.enabled if section is not None else (),
            disabled=disabled,
            custom=custom,
        )
    out: list[str] = []
    for name in resolved:
        offer = registry.offer(name)  # a catalog entry: the tool's module is not imported
        if offer is not None and is_available(offer, secrets, cache, config) and name not in out:
            out.append(name)
    return out


def bundle_for(surface_bundle: str, provider: str) -> str:
    """The bundle a surface exposes for this provider: the tiny offline model chats
    without tools whatever the surface (its read-only bundle, `herald-local`, is opt-in
    through ``toolsets.enabled``)."""
    return "herald-local-chat" if provider == "local" else surface_bundle
