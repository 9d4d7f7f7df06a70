"""What the stages of a turn get instead of the `Agent`.

`SessionRuntime` holds the long-lived collaborators of one session (store,
config, context engine, accountant, memory, the agent's tool overlay) and its
mutable `SessionState` (id, transcript, frozen prompt, meta, active client).
`TurnContext` is built once per turn from it and adds what belongs to that turn
only: the callbacks, the cancel event and steer queue its `TurnHandle` owns,
the `Humans` who may answer, the tools offered, and a `ToolContext` copy
carrying this turn's cancel event and humans. Stages take a `TurnContext` plus
the mutable `TurnState`; nothing in herald.engine but agent.py knows `Agent`.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from herald.plugins.hooks import NO_HOOKS, HookRunner

if TYPE_CHECKING:
    from herald.config import HeraldConfig, HeraldHome, Secrets
    from herald.context import ContextEngine, TokenAccountant
    from herald.engine.callbacks import TurnCallbacks
    from herald.engine.deferred import DeferredTools
    from herald.engine.economics import PrefixTracker
    from herald.engine.handle import Humans
    from herald.engine.options import AgentOptions
    from herald.engine.ports import TranscriptStore
    from herald.engine.result import TurnResult
    from herald.engine.steer import SteerQueue
    from herald.engine.transcript import Transcript
    from herald.memory import MemoryManager
    from herald.providers import ModelClient
    from herald.tools import ToolContext, ToolRegistry, ToolResult, ToolSelection, ToolSpec


@dataclass
class SessionState:
    """What changes over a session's life (never per turn)."""

    client: ModelClient
    id: str | None = None
    transcript: Transcript | None = None
    system_prompt: str | None = None
    identity: tuple[str, str] = ("", "")  # provider/model the stored prompt names
    meta: dict[str, Any] = field(default_factory=dict)
    prefix: PrefixTracker | None = None  # the previous request, for cache-break reports


@dataclass(frozen=True)
class SessionRuntime:
    """The session's collaborators; one per `Agent`."""

    config: HeraldConfig
    home: HeraldHome
    secrets: Secrets | None
    store: TranscriptStore
    options: AgentOptions
    tools: ToolRegistry  # the agent's overlay: its own tools on top of the built-ins
    context_engine: ContextEngine
    accountant: TokenAccountant
    tool_context: ToolContext  # the session's; each turn works on a copy
    state: SessionState
    memory: MemoryManager | None = None
    hooks: HookRunner = NO_HOOKS  # the enabled plugins' hooks (none by default)

    def select_tools(self) -> ToolSelection:
        """The tools this session offers now (a pure read: nothing is stored)."""
        from herald.tools import select_tools

        return select_tools(
            self.tools,
            self.config,
            bundle=self.options.toolset,
            explicit=self.options.enabled_tools,
            profile=self.home.profile_label,
            secrets=self.secrets,
        )


@dataclass(frozen=True)
class ToolView:
    """The tools one turn offers: the names a call is checked against and the array
    every request of the turn carries (deferred tools: see engine/deferred.py)."""

    registry: ToolRegistry
    names: tuple[str, ...]
    definitions: tuple[dict[str, Any], ...]  # sent in full, in this order
    deferred: DeferredTools | None = None
    # Called with the names tool_search just loaded (the next request's tools change).
    on_load: Callable[[list[str]], None] | None = None

    @classmethod
    def of(cls, runtime: SessionRuntime) -> ToolView:
        from herald.engine.deferred import META_KEY, TOOL_SEARCH, DeferredTools, deferred_names

        selection = runtime.select_tools()
        appended = (
            runtime.tools.appended_tool_names() if runtime.options.enabled_tools is None else ()
        )
        later = set(deferred_names(runtime.config, selection.names, appended))
        if not later:
            return cls(runtime.tools, selection.names, tuple(selection.definitions))
        meta = runtime.state.meta
        loaded = meta.get(META_KEY)
        if not isinstance(loaded, list):
            loaded = meta[META_KEY] = []
        full = [d for d in selection.definitions if d["function"]["name"] not in later]
        deferred = DeferredTools(
            {
                d["function"]["name"]: d
                for d in selection.definitions
                if d["function"]["name"] in later
            },
            loaded,
        )

        def on_load(names: list[str]) -> None:
            if runtime.state.prefix is not None:
                runtime.state.prefix.expect(f"tool_search loaded {', '.join(names)}")

        return cls(runtime.tools, (*selection.names, TOOL_SEARCH), tuple(full), deferred, on_load)

    def request_tools(self) -> list[dict[str, Any]] | None:
        tail = self.deferred.tools_tail() if self.deferred is not None else []
        return [*self.definitions, *tail] or None

    @property
    def chars(self) -> int:
        """Size of the tools array the next request carries (for token estimates)."""
        return len(json.dumps(self.request_tools() or []))

    def spec(self, name: str) -> ToolSpec | None:
        return self.registry.get(name) if name in self.names else None

    def dispatch(self, name: str, arguments: str, ctx: ToolContext) -> ToolResult:
        if self.deferred is not None:
            from herald.engine.deferred import TOOL_SEARCH

            if name == TOOL_SEARCH:
                result, fresh = self.deferred.search(arguments)
            else:  # calling a deferred tool directly loads its schema too
                result, fresh = (
                    self.registry.dispatch(name, arguments, ctx),
                    self.deferred.load([name]),
                )
            if fresh and self.on_load is not None:
                self.on_load(fresh)
            return result
        return self.registry.dispatch(name, arguments, ctx)


# Builds the child agent a background review runs in; returns something with
# `start_turn(text)` and `close()` (an `Agent`).
ReviewerFactory = Callable[["AgentOptions"], Any]
ReviewerRun = Callable[[str], "TurnResult"]


class RuntimeParts:
    """Read-only shorthands for the parts of a `SessionRuntime` (shared by `Agent`, the
    session, and `TurnContext`, one turn of it)."""

    runtime: SessionRuntime

    @property
    def config(self) -> HeraldConfig:
        return self.runtime.config

    @property
    def options(self) -> AgentOptions:
        return self.runtime.options

    @property
    def store(self) -> TranscriptStore:
        return self.runtime.store

    @property
    def context_engine(self) -> ContextEngine:
        return self.runtime.context_engine

    @property
    def accountant(self) -> TokenAccountant:
        return self.runtime.accountant

    @property
    def memory(self) -> MemoryManager | None:
        return self.runtime.memory

    @property
    def hooks(self) -> HookRunner:
        return self.runtime.hooks


@dataclass(frozen=True)
class TurnContext(RuntimeParts):
    runtime: SessionRuntime
    client: ModelClient
    tools: ToolView
    transcript: Transcript
    callbacks: TurnCallbacks
    cancel: threading.Event
    steer: SteerQueue
    humans: Humans | None
    tool_context: ToolContext  # this turn's copy: its cancel event and its humans
    user_text: str = ""
    user_images: tuple[Any, ...] = ()  # ImageRefs attached to the user's message
    make_reviewer: ReviewerFactory | None = None

    # ---- shorthands for the session (the runtime's parts come from RuntimeParts) ---------

    @property
    def session(self) -> SessionState:
        return self.runtime.state

    @property
    def session_id(self) -> str:
        assert self.runtime.state.id is not None
        return self.runtime.state.id

    @property
    def identity(self) -> str:
        """Whose turn this is (DESIGN invariant 19); the tools see it on `tool_context`."""
        return self.runtime.options.identity


__all__ = [
    "ReviewerFactory",
    "RuntimeParts",
    "SessionRuntime",
    "SessionState",
    "ToolView",
    "TurnContext",
]
