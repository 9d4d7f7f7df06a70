"""The tool registry: a set of tools a surface owns; the engine dispatches by name.

Registering is not exposing: a registered tool reaches the model only when the
surface asks for it by name (toolsets, built on top of this, decide which).
Every result handed back to the engine is a string (JSON for structured
results) and every handler failure becomes an error string, never an exception
(DESIGN invariant 11).

`register()` options that steer how the engine runs a tool:

- ``parallel_safe``: calls may run concurrently with other parallel-safe calls
  of the same assistant message (see `herald.tools.planner`).
- ``reads`` / ``writes``: the arguments that name a path the tool reads or
  writes. The planner reserves the canonical path so a writer never runs
  alongside another call on an overlapping path. A missing argument means the
  working directory.
- ``max_result_chars``: a longer result is saved to a file and the model gets a
  preview (see `herald.tools.results`).
- ``check_fn`` / ``requires_env``: availability; an unavailable tool never
  reaches the model (see `herald.tools.toolsets`).

`dispatch()` parses the arguments (invalid JSON is an error result asking for
valid JSON), coerces them against the tool's schema (`herald.tools.coercion`),
runs the ``pre_tool_call`` hooks (veto or rewrite), the handler, the spill
step and the ``post_tool_call`` hooks.
"""

from __future__ import annotations

import copy
import json
import logging
import re
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from herald.safety import strip_structure_tags
from herald.safety.provenance import untrusted
from herald.tools.change_intent import change_intent
from herald.tools.coercion import coerce_arguments
from herald.tools.hooks import ToolHooks, Veto
from herald.tools.offers import Offered, ToolOffer, as_json
from herald.tools.results import limit_result

if TYPE_CHECKING:
    from herald.config import HeraldConfig, HeraldHome, Secrets
    from herald.environments import Environment
    from herald.safety import ApprovalPrompt
    from herald.tools.ports import (
        ChangeGuard,
        ChatFiles,
        HistoryStore,
        MemoryHandle,
        NestedTools,
        RequestSnapshot,
    )

log = logging.getLogger(__name__)

ToolHandler = Callable[[dict[str, Any], "ToolContext"], Any]
PathMode = Literal["read", "write"]
S = TypeVar("S")
_OWN_LOCK = threading.Lock()  # parallel-safe calls may ask for the same state at once

ERROR_PREFIX = "[TOOL_ERROR]"
MAX_ERROR_CHARS = 2000
DEFAULT_MAX_RESULT_CHARS = 50_000

_FENCE_RE = re.compile(r"`{3,}|~{3,}")
_CDATA_RE = re.compile(r"<!\[CDATA\[|\]\]>")


@dataclass
class ToolContext:
    """What a handler may know about the call it serves. One per agent; the surface
    fills in the callbacks that need a human."""

    session_id: str | None = None
    cancel: threading.Event = field(default_factory=threading.Event)
    # Each tool's own per-agent state (the todo list, killed process ids) is reached with
    # `own(TheStateClass)`; services the tools share are the typed fields below.
    _owned: dict[type, Any] = field(default_factory=dict, repr=False)
    home: HeraldHome | None = None
    config: HeraldConfig | None = None
    secrets: Secrets | None = None
    environment: Environment | None = None  # where commands run and files live
    surface: str = "cli"  # cli | api | webhook | cron | gateway platform name
    # The chat this agent serves, "platform:chat[:thread]" (set by the gateway; None at
    # the CLI): a job the model schedules may deliver back only there (herald.cron).
    origin: str | None = None
    # The chat of `origin` as a place to upload files (set by the gateway for chat
    # platforms; None elsewhere): the send_file tool sends only there.
    chat_files: ChatFiles | None = None
    # Whose turn this is (config `identities`); tools that read stored conversations or
    # memory read only this identity's (DESIGN invariant 19).
    identity: str = "owner"
    # Ask the human to approve a dangerous command: returns "once" | "session" | "always"
    # | "deny", or None on timeout. None here means no human is present.
    approve: Callable[[ApprovalPrompt], str | None] | None = None
    # Ask the human a question (the clarify tool); None when no human is present.
    clarify: Callable[[str, list[str] | None], str | None] | None = None
    # With no human (approve is None): the command patterns this job, worker or client
    # may run beyond the known read-only commands (approvals.unattended_allow adds to
    # them), and how the owner allows one more ("{pattern}" marks the pattern), for the
    # refusal. Set by the surface that starts the turn; sub-agents inherit both.
    unattended_allow: tuple[str, ...] = ()
    unattended_hint: str = ""
    on_activity: Callable[[str], None] | None = None  # throttled progress of long tools
    # The session store (a herald.state.StateStore) for tools that read history.
    store: HistoryStore | None = None
    # The agent's memory manager (the `memory` tool and a provider's tools write through it).
    memory: MemoryHandle | None = None
    # Smart approvals: the auxiliary model's verdict on a flagged command; None = off.
    judge: Callable[[str], str] | None = None
    # Filled per turn by the engine (None outside a turn): the turn's status line (its
    # callbacks' `status`), a read-only snapshot of the request whose tool calls are
    # running (`RequestSnapshot`), and a factory of child agents on this session's home,
    # store and tools (`herald.delegation` builds sub-agents with it).
    notify: Callable[[str], None] | None = None
    parent_request: Callable[[], RequestSnapshot] | None = None
    spawn_agent: Callable[..., Any] | None = None
    # Filled per turn by the engine: the checkpoint step `dispatch` runs before a call
    # that may change files (herald.checkpoints); None = no checkpoints (tests, MCP).
    checkpoint: ChangeGuard | None = None
    # Filled per turn by the engine: this turn's tools for a tool that calls others on
    # the model's behalf (execute_code), through the turn's own dispatch path and gates;
    # None outside a turn, where such a tool refuses to run.
    nested_tools: NestedTools | None = None
    # Filled per turn by the engine: one call to the auxiliary model (under the spending
    # caps) with OpenAI-chat messages that may carry images; vision_analyze uses it.
    look: Callable[[list[dict[str, Any]]], str] | None = None
    # A delegated sub-agent's context (herald.delegation): Herald's admin commands and
    # nested agents are refused from it, whoever would approve them.
    delegated: bool = False

    def close_owned(self) -> None:
        """The agent is done: release what the tools' per-agent state holds (a browser).
        Each value with a `close()` is closed once; a failure is logged, never raised."""
        with _OWN_LOCK:
            values = list(self._owned.values())
        for value in values:
            close = getattr(value, "close", None)
            if callable(close):
                try:
                    close()
                except Exception:
                    log.warning("closing %s failed", type(value).__name__, exc_info=True)

    def own(self, kind: type[S]) -> S:
        """This agent's instance of `kind`, a tool's private per-agent state (its class
        is the key, so the state is typed and no two tools can collide on a name). It is
        made with no arguments on first use and lives as long as the agent."""
        with _OWN_LOCK:
            value = self._owned.get(kind)
            if value is None:
                value = self._owned[kind] = kind()
            return value


@dataclass(frozen=True)
class PathScope:
    mode: PathMode
    argument: str


def check_path_arguments(
    name: str, parameters: Any, reads: Iterable[str], writes: Iterable[str]
) -> None:
    """`reads`/`writes` must name arguments the tool has: a misspelt one would let a
    writer run beside a call on the same path (a bug in the tool, caught at declaration)."""
    _check_named_arguments(name, parameters, "reads/writes", {*reads, *writes})


def check_trust_declaration(
    name: str, parameters: Any, controls: Iterable[str], untrusted: str | None
) -> None:
    """`controls` must name arguments the tool has (a misspelt one would leave the real
    control argument unchecked), and `untrusted` must be a source label ``kind:name``."""
    _check_named_arguments(name, parameters, "controls", set(controls))
    if untrusted is not None and not re.fullmatch(r"[a-z]+:\S+", untrusted):
        raise ValueError(
            f"tool {name!r}: untrusted={untrusted!r} is not a provenance source; "
            "write it as kind:name, for example 'plugin:mytool'"
        )


def _check_named_arguments(name: str, parameters: Any, label: str, named: set[str]) -> None:
    known = (
        set((parameters or {}).get("properties") or {}) if isinstance(parameters, dict) else set()
    )
    unknown = sorted(named - known)
    if unknown:
        raise ValueError(
            f"tool {name!r}: {label} name {', '.join(map(repr, unknown))}, which "
            f"{'is not an argument' if len(unknown) == 1 else 'are not arguments'} of the tool "
            f"(its arguments: {', '.join(sorted(known)) or 'none'})"
        )


@dataclass(frozen=True)
class ToolSpec:
    name: str
    toolset: str
    schema: dict[str, Any]  # {"name", "description", "parameters"}
    handler: ToolHandler
    check_fn: Callable[[ToolContext], bool] | None = None
    requires_env: tuple[str, ...] = ()
    parallel_safe: bool = False
    # The arguments that hold paths the tool reads / writes (the batch planner keeps a
    # writer apart from calls touching the same path).
    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    max_result_chars: int = DEFAULT_MAX_RESULT_CHARS
    # Rebuilds the tool's per-agent state from a resumed transcript.
    restore_fn: Callable[[list[dict[str, Any]], ToolContext], None] | None = None
    # Control and data (DESIGN invariant 18, herald.safety.taint): the arguments whose
    # values decide where the action goes (a path, a command, a URL, a recipient); a
    # consequential tool's control values may not come from untrusted content without the
    # owner. Arguments not named here are data and may carry untrusted text freely.
    controls: tuple[str, ...] = ()
    consequential: bool = False
    # A provenance source ("plugin:<name>") when this tool's results are untrusted content.
    untrusted: str | None = None
    # For a consequential tool, whether one call is (terminal: not for a command known to
    # be read-only; web_extract: only when the URL carries a query). None: every call.
    consequence: Callable[[dict[str, Any], ToolContext], bool] | None = None
    # Arguments whose text is kept for later sessions (a memory entry, a skill): when the
    # owner approves one taken from untrusted content, it is stored with its source.
    attributed: tuple[str, ...] = ()
    # Data arguments whose text leaves for other people (a message body, a payment's
    # subject): the entities in them (links, addresses, account numbers, codes) are
    # checked like controls; their prose stays data.
    outbound: tuple[str, ...] = ()

    def is_consequential(self, args: dict[str, Any], ctx: ToolContext) -> bool:
        """Whether this call, with these arguments, needs the taint check."""
        if not self.consequential:
            return False
        if self.consequence is None:
            return True
        try:
            return bool(self.consequence(args, ctx))
        except Exception:  # a predicate that cannot answer counts the call as consequential
            log.debug("consequence check of %s failed", self.name, exc_info=True)
            return True

    @property
    def path_scopes(self) -> tuple[PathScope, ...]:
        return tuple(PathScope("read", a) for a in self.reads) + tuple(
            PathScope("write", a) for a in self.writes
        )

    @property
    def path_scope(self) -> str | None:
        """The scopes as text (``"read:path"``), for display."""
        text = ",".join(f"{s.mode}:{s.argument}" for s in self.path_scopes)
        return text or None

    @property
    def read_only(self) -> bool:
        """Parallel-safe and writes no path: repeating it cannot make progress by itself."""
        return self.parallel_safe and all(s.mode == "read" for s in self.path_scopes)

    def definition(self) -> dict[str, Any]:
        """The OpenAI function-format definition sent to the model (a fresh copy, so a
        caller editing it cannot change the tool's schema)."""
        parameters = self.schema.get("parameters", {"type": "object", "properties": {}})
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.schema.get("description", ""),
                "parameters": copy.deepcopy(parameters),
            },
        }


@dataclass(frozen=True)
class ToolResult:
    content: str
    is_error: bool = False
    # Where the content came from when it is not Herald's own side: "untrusted:<source>"
    # (herald.safety.provenance). A handler returns a ToolResult with it (web_extract
    # names the page); a tool declared ``untrusted=`` gets its source on every result.
    provenance: str | None = None
    # Images the result shows (`herald.providers.images.ImageRef`s, stored under the
    # home): the engine attaches them to the next request for a model that sees images
    # (a browser screenshot); the content still names where each one is.
    images: tuple[Any, ...] = ()


class ToolArgumentError(ValueError):
    """Arguments the model sent that cannot be used; the message is shown to the model."""


def sanitize_error(text: str) -> str:
    """An error body the model can read but that cannot pose as a message."""
    text = strip_structure_tags(text)  # role tags, tool-call markup, chat tokens
    text = _FENCE_RE.sub("", text)
    text = _CDATA_RE.sub("", text)
    text = text.strip()
    if len(text) > MAX_ERROR_CHARS:
        text = text[:MAX_ERROR_CHARS] + " …[truncated]"
    return f"{ERROR_PREFIX} {text}"


def to_result_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


class DeclaredTools:
    """Tools named before their module is imported: `load` gives their specs the first
    time one of them is looked up (a call runs it, or a turn offers it and no catalog
    entry describes it). With `offers` (a catalog: name → `catalog_entry`), offering
    them imports nothing (see `herald.tools.offers`)."""

    def __init__(
        self,
        names: Iterable[str],
        toolset: str,
        load: Callable[[], Iterable[ToolSpec]],
        offers: Mapping[str, Mapping[str, Any]] | None = None,
    ):
        self.names = tuple(names)
        self.toolset = toolset
        self.load = load
        self.offers = {
            name: ToolOffer.from_catalog(name, toolset, entry)
            for name, entry in (offers or {}).items()
            if name in self.names
        }

    def specs(self) -> tuple[ToolSpec, ...]:
        specs = tuple(self.load())
        loaded = {s.name: s.toolset for s in specs}
        declared = dict.fromkeys(self.names, self.toolset)
        if loaded != declared:
            raise ValueError(
                f"a capability declared tools {declared} but its module gives {loaded}; "
                "make the declaration (herald.toolbox) name exactly the module's tools"
            )
        for spec in specs:
            offer = self.offers.get(spec.name)
            if offer is not None and offer.body != as_json(spec.definition()):
                log.warning(
                    "the tool catalog's definition of %s differs from its module's "
                    "(regenerate it: python -m herald.toolbox --write-offers)",
                    spec.name,
                )
        return specs


class ToolRegistry:
    """A set of tools, a value its surface owns (see `herald.toolbox`); tools may be
    declared by name and loaded when first looked up (`declare`)."""

    def __init__(self) -> None:
        self._tools: dict[str, ToolSpec] = {}
        self._pending: dict[str, DeclaredTools] = {}
        self._lock = threading.RLock()
        self._generation = 0
        self.hooks = ToolHooks()

    @property
    def generation(self) -> Any:
        """Changes whenever the set of tools changes (a cache key, compare only); loading
        declared tools does not change the set."""
        return self._generation

    @generation.setter
    def generation(self, value: int) -> None:
        self._generation = value

    def declare(
        self,
        names: Iterable[str],
        toolset: str,
        load: Callable[[], Iterable[ToolSpec]],
        offers: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> None:
        """Name tools of `toolset` whose specs `load` gives when one is first looked up;
        `offers` (catalog entries by name) lets them be offered without loading."""
        declared = DeclaredTools(names, toolset, load, offers)
        with self._lock:
            for name in declared.names:
                self._tools.pop(name, None)
                self._pending[name] = declared
            self._generation += 1

    def _own(self, name: str) -> ToolSpec | None:
        """This registry's own spec of `name`, loading its declaration if need be."""
        spec = self._tools.get(name)
        if spec is not None or name not in self._pending:
            return spec
        with self._lock:
            declared = self._pending.get(name)
            if declared is not None:
                specs = declared.specs()
                for spec in specs:
                    if self._pending.get(spec.name) is declared:
                        del self._pending[spec.name]
                        self._tools[spec.name] = spec
        return self._tools.get(name)

    def offer(self, name: str) -> Offered | None:
        """What offering `name` to the model takes (its definition and availability):
        the spec when loaded, else the catalog's entry (nothing is imported), else the
        spec loaded now. None for an unknown tool."""
        spec = self._tools.get(name)
        if spec is not None:
            return spec
        declared = self._pending.get(name)
        if declared is not None and name in declared.offers:
            return declared.offers[name]
        return self._own(name)

    def _toolset_of(self) -> dict[str, str]:
        """Every tool's toolset, loaded or only declared (nothing is imported)."""
        out = {name: d.toolset for name, d in self._pending.items()}
        out.update((name, spec.toolset) for name, spec in self._tools.items())
        return out

    def loaded_names(self) -> list[str]:
        """The tools whose specs are loaded (for tests of what start-up imports)."""
        return sorted(self._tools)

    def _specs(self) -> dict[str, ToolSpec]:
        """Every spec (declared ones are loaded): only for walks over all tools."""
        for name in list(self._pending):
            self._own(name)
        return self._tools

    def close(self) -> None:
        """The agent using this registry is done (a per-agent layer releases what it holds,
        such as MCP server connections); the shared registry has nothing to release."""

    def appended_tool_names(self) -> tuple[str, ...]:
        """Tools offered after the bundle's, sorted (an overlay's external tools, e.g. MCP
        servers'); a plain registry has none."""
        return ()

    def overlay(self) -> ToolOverlay:
        """A registry that reads through to this one and keeps its own additions to
        itself: one agent's tools (a memory provider's) never reach another agent."""
        return ToolOverlay(self)

    def register(
        self,
        name: str,
        toolset: str,
        schema: dict[str, Any],
        handler: ToolHandler,
        check_fn: Callable[[ToolContext], bool] | None = None,
        requires_env: Iterable[str] = (),
        parallel_safe: bool = False,
        reads: Iterable[str] = (),
        writes: Iterable[str] = (),
        max_result_chars: int = DEFAULT_MAX_RESULT_CHARS,
        restore_fn: Callable[[list[dict[str, Any]], ToolContext], None] | None = None,
        controls: Iterable[str] = (),
        consequential: bool = False,
        untrusted: str | None = None,
        outbound: Iterable[str] = (),
    ) -> ToolSpec:
        """A tool declared from a schema dict (a memory provider's, a test's); built-in
        tools use `@tool` on a typed function instead."""
        reads, writes, controls = tuple(reads), tuple(writes), tuple(controls)
        outbound = tuple(outbound)
        check_path_arguments(name, schema.get("parameters"), reads, writes)
        check_trust_declaration(name, schema.get("parameters"), (*controls, *outbound), untrusted)
        if max_result_chars < 1:
            raise ValueError(f"max_result_chars for {name!r} must be positive")
        spec = ToolSpec(
            name=name,
            toolset=toolset,
            schema={**schema, "name": name},
            handler=handler,
            check_fn=check_fn,
            requires_env=tuple(requires_env),
            parallel_safe=parallel_safe,
            reads=reads,
            writes=writes,
            max_result_chars=max_result_chars,
            restore_fn=restore_fn,
            controls=controls,
            consequential=consequential,
            untrusted=untrusted,
            outbound=outbound,
        )
        with self._lock:
            self._pending.pop(name, None)
            self._tools[name] = spec
            self._generation += 1
        return spec

    def add(self, *specs: ToolSpec) -> None:
        """Add declared tools (see `herald.tools.declare`); a later spec of the same name
        replaces the earlier one."""
        with self._lock:
            for spec in specs:
                self._pending.pop(spec.name, None)
                self._tools[spec.name] = spec
            self._generation += 1

    def unregister(self, name: str) -> None:
        with self._lock:
            found = self._tools.pop(name, None) or self._pending.pop(name, None)
            if found is not None:
                self._generation += 1

    def get(self, name: str) -> ToolSpec | None:
        return self._own(name)

    def names(self) -> list[str]:
        return sorted(self._toolset_of())

    def definitions(self, names: Sequence[str]) -> list[dict[str, Any]]:
        """Definitions for `names`, in that order; unknown names are skipped."""
        offers = [self.offer(n) for n in names]
        return [offer.definition() for offer in offers if offer is not None]

    def restore_state(self, messages: list[dict[str, Any]], ctx: ToolContext) -> None:
        """Let each tool the transcript called rebuild its per-agent state from it (a tool
        never called has none, and its module need not be imported for that)."""
        called = {
            (call.get("function") or {}).get("name")
            for message in messages
            for call in message.get("tool_calls") or ()
            if isinstance(call, dict)
        }
        for name in sorted(n for n in called if isinstance(n, str)):
            spec = self.get(name)
            if spec is not None and spec.restore_fn is not None:
                spec.restore_fn(messages, ctx)

    def toolsets(self) -> dict[str, list[str]]:
        """Tool names by the toolset they registered with (nothing declared is loaded)."""
        out: dict[str, list[str]] = {}
        for name, toolset in sorted(self._toolset_of().items()):
            out.setdefault(toolset, []).append(name)
        return out

    def add_hook(self, event: str, fn: Callable[..., Any]) -> None:
        """Add a ``pre_tool_call`` or ``post_tool_call`` hook (see `herald.tools.hooks`)."""
        self.hooks.add(event, fn)

    def remove_hook(self, event: str, fn: Callable[..., Any]) -> None:
        self.hooks.remove(event, fn)

    def dispatch(
        self,
        name: str,
        raw_arguments: str | dict[str, Any] | None,
        ctx: ToolContext,
        *,
        run_hooks: bool = True,
    ) -> ToolResult:
        """Run one call; never raises. ``run_hooks=False`` for Herald's internal calls."""
        spec = self.get(name)
        if spec is None:
            known = ", ".join(self.names()) or "none"
            return ToolResult(sanitize_error(f"unknown tool {name!r}; available: {known}"), True)
        try:
            args = parse_arguments(raw_arguments)
        except ToolArgumentError as exc:
            return ToolResult(sanitize_error(str(exc)), True)
        args = coerce_arguments(args, spec.schema.get("parameters"))
        if run_hooks:
            try:
                args = self.hooks.run_pre(name, args, ctx)
            except Veto as veto:
                result = ToolResult(sanitize_error(f"{name} was blocked: {veto.reason}"), True)
                self.hooks.run_post(name, args, result, ctx)
                return result
        notice = _checkpoint_first(spec, args, ctx)
        result = self._run_handler(spec, args, ctx)
        if notice is not None:
            result = replace(result, content=f"{result.content}\n[{notice}]")
        if run_hooks:
            self.hooks.run_post(name, args, result, ctx)
        return result

    def _run_handler(self, spec: ToolSpec, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            value = spec.handler(args, ctx)
        except ToolArgumentError as exc:  # Herald's own words (a refusal, a bad argument)
            return ToolResult(sanitize_error(str(exc)), True)
        except Exception as exc:  # a tool bug must not end the turn
            log.debug("tool %s raised", spec.name, exc_info=True)
            return ToolResult(
                sanitize_error(f"{spec.name} failed: {type(exc).__name__}: {exc}"), True
            )
        # What an untrusted tool returns, result or error, is its source's words.
        provenance = untrusted(spec.untrusted) if spec.untrusted is not None else None
        images: tuple[Any, ...] = ()
        if isinstance(value, ToolResult):  # a handler may report its own error
            provenance = value.provenance or provenance
            images = value.images
            if value.is_error:
                body = value.content.removeprefix(ERROR_PREFIX)
                return ToolResult(sanitize_error(body), True, provenance)
            value = value.content
        text = to_result_text(value)
        home_root = ctx.home.root if ctx.home is not None else None
        return ToolResult(
            limit_result(
                text, tool=spec.name, max_result_chars=spec.max_result_chars, home_root=home_root
            ),
            provenance=provenance,
            images=images,
        )


class ToolOverlay(ToolRegistry):
    """One agent's tools on top of a shared registry (see `ToolRegistry.overlay`).
    Hooks are the shared registry's; tools added here shadow shared ones by name."""

    def __init__(self, base: ToolRegistry):
        super().__init__()
        self.base = base
        self.hooks = base.hooks

    @property
    def generation(self) -> Any:
        return (self.base.generation, self._generation)

    @generation.setter
    def generation(self, value: int) -> None:
        self._generation = value

    def get(self, name: str) -> ToolSpec | None:
        spec = self._own(name)
        return spec if spec is not None else self.base.get(name)

    def offer(self, name: str) -> Offered | None:
        if name in self._tools or name in self._pending:
            return super().offer(name)
        return self.base.offer(name)

    def _toolset_of(self) -> dict[str, str]:
        return {**self.base._toolset_of(), **super()._toolset_of()}

    def _specs(self) -> dict[str, ToolSpec]:
        own = super()._specs()
        return {**self.base._specs(), **own} if own else self.base._specs()

    def overlay(self) -> ToolOverlay:
        return ToolOverlay(self)

    def appended_tool_names(self) -> tuple[str, ...]:
        return self.base.appended_tool_names()

    def close(self) -> None:
        self.base.close()

    def dispatch(
        self,
        name: str,
        raw_arguments: str | dict[str, Any] | None,
        ctx: ToolContext,
        *,
        run_hooks: bool = True,
    ) -> ToolResult:
        """Tools added here run here; everything else is the base's to run (a base may
        treat its own names specially, as the MCP overlay does)."""
        if name in self._tools or name in self._pending:
            return super().dispatch(name, raw_arguments, ctx, run_hooks=run_hooks)
        return self.base.dispatch(name, raw_arguments, ctx, run_hooks=run_hooks)


def _checkpoint_first(spec: ToolSpec, args: dict[str, Any], ctx: ToolContext) -> str | None:
    """Checkpoint the workdir before a call that may change it, after the hooks settled
    the arguments (a rewritten command is the one classified). A notice (no checkpoint
    could be taken, and why) goes to the user now and rides on the result for the model;
    it never stops the call."""
    if ctx.checkpoint is None:
        return None
    intent = change_intent(spec.name, spec.writes, args)
    if intent is None:
        return None
    notice = ctx.checkpoint.before_change(intent.tool, intent.command)
    if notice is not None and ctx.notify is not None:
        ctx.notify(notice)
    return notice


def parse_arguments(raw: str | dict[str, Any] | None) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    if raw is None or not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ToolArgumentError(
            f"the arguments were not valid JSON ({exc.msg} at position {exc.pos}); "
            "resend the call with a valid JSON object"
        ) from None
    if not isinstance(value, dict):
        raise ToolArgumentError(
            f"the arguments must be a JSON object, got {type(value).__name__}; "
            "resend the call with a JSON object"
        )
    return value
