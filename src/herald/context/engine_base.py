"""The `ContextEngine` contract and the registry that picks the one active engine.

An engine decides when the history is too big and what a smaller history
looks like. Messages it is given carry their stored row id under `ROW_ID`;
rows it keeps must keep that key, rows it writes must not have it — that is
how the turn engine knows what to archive (nothing is ever deleted).

Optional hooks are called through `call_optional`, which passes only the
keyword arguments the engine's method actually accepts, so a third-party
engine can implement just what it needs.
"""

from __future__ import annotations

import inspect
import logging
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

ROW_ID = "_row_id"


class ContextEngine(ABC):
    name: str = ""

    @abstractmethod
    def update_from_response(self, usage: Any) -> None:
        """The provider's usage for the last call (the anchor of all accounting)."""

    @abstractmethod
    def should_compress(self, prompt_tokens: int | None = None) -> bool: ...

    @abstractmethod
    def compress(
        self, messages: list[dict[str, Any]], *, focus: str | None = None, force: bool = False
    ) -> list[dict[str, Any]]:
        """A smaller history. Kept rows keep `ROW_ID`; new rows have none."""

    # Optional, looked up with call_optional():
    #   select_context(messages) -> messages for this request only
    #   on_turn_complete(messages)
    #   prune_tool_results_only(messages, prompt_tokens) -> messages | None
    #   on_session_start(session_id, state) / on_session_end() / on_session_reset()
    #   get_tool_schemas() -> list[dict];  handle_tool_call(name, args) -> str
    #   status() -> dict


def call_optional(engine: object, method: str, /, default: Any = None, **kwargs: Any) -> Any:
    """Call `engine.method` if it exists, with only the keyword arguments it accepts."""
    fn = getattr(engine, method, None)
    if fn is None or not callable(fn):
        return default
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return fn(**kwargs)
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return fn(**kwargs)
    accepted = {k: v for k, v in kwargs.items() if k in params}
    return fn(**accepted)


EngineFactory = Callable[..., ContextEngine]
_ENGINES: dict[str, EngineFactory] = {}


def register_engine(name: str, factory: EngineFactory) -> None:
    _ENGINES[name] = factory


def engine_names() -> list[str]:
    return sorted(_ENGINES)


class UnknownContextEngineError(ValueError):
    pass


def create_engine(name: str, **deps: Any) -> ContextEngine:
    """Build the engine named by `context.engine`, passing only the dependencies its
    factory accepts."""
    factory = _ENGINES.get(name)
    if factory is None:
        raise UnknownContextEngineError(
            f"unknown context engine {name!r} (context.engine); available: "
            f"{', '.join(engine_names()) or 'none'}"
        )
    params = inspect.signature(factory).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return factory(**deps)
    return factory(**{k: v for k, v in deps.items() if k in params})
