"""The `ContextEngine` contract and the registry that picks the one active engine.

An engine decides when the history is too big and what a smaller history
looks like. It is given the history as `Message` values, each stored one with
its `row_id`. A message it keeps is returned as it was given (the same value);
a message it writes or changes has no row id (`Message.evolve` drops it). That
is how the turn engine knows what to archive: the stored rows that are no
longer in the result (nothing is ever deleted).

Optional hooks are ordinary methods of the base class that do nothing, so an
engine overrides just what it needs and a misspelt override is a method that
is never called (ruff/mypy flag it), not a hook silently skipped by name.
"""

from __future__ import annotations

import inspect
import logging
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

from herald.providers.message import Message

log = logging.getLogger(__name__)


class ContextEngine(ABC):
    name: str = ""

    @abstractmethod
    def update_from_response(self, usage: Any) -> None:
        """The provider's usage for the last call (the anchor of all accounting)."""

    @abstractmethod
    def should_compress(self, prompt_tokens: int | None = None) -> bool: ...

    @abstractmethod
    def compress(
        self, messages: list[Message], *, focus: str | None = None, force: bool = False
    ) -> list[Message]:
        """A smaller history: kept messages as given, new ones without a row id."""

    # ---- optional hooks: no-ops unless an engine overrides them -----------------------------

    context_window: int = 0  # tokens the active model takes; 0 when unknown
    last_report: Any = None  # the last compression's report (tokens_before/after, warnings)

    def on_session_start(self, session_id: str, state: dict[str, Any] | None = None) -> None:  # noqa: B027 - an optional hook
        """A session starts or resumes; `state` is what `export_state` returned before."""

    def on_session_end(self) -> None:  # noqa: B027 - an optional hook
        """The agent is closing."""

    def export_state(self) -> dict[str, Any] | None:
        """State to keep with the session (restored through `on_session_start`)."""
        return None

    def prune_tool_results_only(
        self, messages: list[Message], prompt_tokens: int | None = None
    ) -> list[Message] | None:
        """A cheaper relief than compression; None (or `messages`) when nothing changed."""
        return None

    def set_overhead(self, tokens: int) -> None:  # noqa: B027 - an optional hook
        """What every request carries besides the history (system prompt, tools)."""

    def tool_result_cap(self, results: int) -> int | None:
        """Tokens each of a round's `results` new tool results may keep; None: results
        are never cut."""
        return None

    def status(self) -> dict[str, Any]:
        return {"name": self.name}


EngineFactory = Callable[..., ContextEngine]
_ENGINES: dict[str, EngineFactory] = {}


def register_engine(name: str, factory: EngineFactory) -> None:
    _ENGINES[name] = factory


def engine_names() -> list[str]:
    return sorted(_ENGINES)


class UnknownContextEngineError(ValueError):
    pass


def create_engine(
    name: str, *, plugin_engines: dict[str, EngineFactory] | None = None, **deps: Any
) -> ContextEngine:
    """Build the engine named by `context.engine`, passing only the dependencies its
    factory accepts. `plugin_engines` are one agent's extra choices (its plugins');
    a built-in of the same name wins."""
    extra = plugin_engines or {}
    factory = _ENGINES.get(name) or extra.get(name)
    if factory is None:
        raise UnknownContextEngineError(
            f"unknown context engine {name!r} (context.engine); available: "
            f"{', '.join(sorted({*engine_names(), *extra})) or 'none'}"
        )
    params = inspect.signature(factory).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return factory(**deps)
    return factory(**{k: v for k, v in deps.items() if k in params})
