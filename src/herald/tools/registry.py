"""The tool registry: tools register themselves; the engine dispatches by name.

Registering is not exposing: a registered tool reaches the model only when the
surface asks for it by name (toolsets, built on top of this, decide which).
Every result handed back to the engine is a string (JSON for structured
results) and every handler failure becomes an error string, never an exception
(DESIGN invariant 11).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from herald.config import HeraldConfig, HeraldHome, Secrets
    from herald.environments import Environment
    from herald.safety import ApprovalPrompt

ToolHandler = Callable[[dict[str, Any], "ToolContext"], Any]

ERROR_PREFIX = "[TOOL_ERROR]"
MAX_ERROR_CHARS = 2000
DEFAULT_MAX_RESULT_CHARS = 50_000

# Text a hostile tool output could use to impersonate conversation structure.
_ROLE_TAG_RE = re.compile(
    r"</?\s*(?:system|assistant|user|tool|human|im_start|im_end)[^>]*>|<\|[^|>]{0,40}\|>",
    re.IGNORECASE,
)
_FENCE_RE = re.compile(r"`{3,}|~{3,}")
_CDATA_RE = re.compile(r"<!\[CDATA\[|\]\]>")


@dataclass
class ToolContext:
    """What a handler may know about the call it serves. One per agent; the surface
    fills in the callbacks that need a human."""

    session_id: str | None = None
    cancel: threading.Event = field(default_factory=threading.Event)
    state: dict[str, Any] = field(default_factory=dict)  # per-agent tool state (e.g. todo list)
    home: HeraldHome | None = None
    config: HeraldConfig | None = None
    secrets: Secrets | None = None
    environment: Environment | None = None  # where commands run and files live
    surface: str = "cli"  # cli | api | webhook | cron | gateway platform name
    # Ask the human to approve a dangerous command: returns "once" | "session" | "always"
    # | "deny", or None on timeout. None here means no human is present.
    approve: Callable[[ApprovalPrompt], str | None] | None = None
    # Ask the human a question (the clarify tool); None when no human is present.
    clarify: Callable[[str, list[str] | None], str | None] | None = None
    on_activity: Callable[[str], None] | None = None  # throttled progress of long tools


@dataclass(frozen=True)
class ToolSpec:
    name: str
    toolset: str
    schema: dict[str, Any]  # {"name", "description", "parameters"}
    handler: ToolHandler
    check_fn: Callable[[], bool] | None = None
    requires_env: tuple[str, ...] = ()
    parallel_safe: bool = False
    path_scope: str | None = None
    max_result_chars: int = DEFAULT_MAX_RESULT_CHARS
    # Rebuilds the tool's per-agent state from a resumed transcript.
    restore_fn: Callable[[list[dict[str, Any]], dict[str, Any]], None] | None = None

    def definition(self) -> dict[str, Any]:
        """The OpenAI function-format definition sent to the model."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.schema.get("description", ""),
                "parameters": self.schema.get("parameters", {"type": "object", "properties": {}}),
            },
        }


@dataclass(frozen=True)
class ToolResult:
    content: str
    is_error: bool = False


class ToolArgumentError(ValueError):
    """Arguments the model sent that cannot be used; the message is shown to the model."""


def sanitize_error(text: str) -> str:
    """An error body the model can read but that cannot pose as a message."""
    text = _ROLE_TAG_RE.sub("", text)
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


class ToolRegistry:
    def __init__(self) -> None:
        self._tools: dict[str, ToolSpec] = {}
        self._lock = threading.Lock()
        self.generation = 0

    def register(
        self,
        name: str,
        toolset: str,
        schema: dict[str, Any],
        handler: ToolHandler,
        check_fn: Callable[[], bool] | None = None,
        requires_env: Iterable[str] = (),
        parallel_safe: bool = False,
        path_scope: str | None = None,
        max_result_chars: int = DEFAULT_MAX_RESULT_CHARS,
        restore_fn: Callable[[list[dict[str, Any]], dict[str, Any]], None] | None = None,
    ) -> ToolSpec:
        spec = ToolSpec(
            name=name,
            toolset=toolset,
            schema={**schema, "name": name},
            handler=handler,
            check_fn=check_fn,
            requires_env=tuple(requires_env),
            parallel_safe=parallel_safe,
            path_scope=path_scope,
            max_result_chars=max_result_chars,
            restore_fn=restore_fn,
        )
        with self._lock:
            self._tools[name] = spec
            self.generation += 1
        return spec

    def unregister(self, name: str) -> None:
        with self._lock:
            if self._tools.pop(name, None) is not None:
                self.generation += 1

    def get(self, name: str) -> ToolSpec | None:
        return self._tools.get(name)

    def names(self) -> list[str]:
        return sorted(self._tools)

    def definitions(self, names: Sequence[str]) -> list[dict[str, Any]]:
        """Definitions for `names`, in that order; unknown names are skipped."""
        return [self._tools[n].definition() for n in names if n in self._tools]

    def restore_state(self, messages: list[dict[str, Any]], ctx: ToolContext) -> None:
        """Let each tool rebuild its per-agent state from a resumed transcript."""
        for spec in list(self._tools.values()):
            if spec.restore_fn is not None:
                spec.restore_fn(messages, ctx.state)

    def dispatch(self, name: str, raw_arguments: str, ctx: ToolContext) -> ToolResult:
        spec = self._tools.get(name)
        if spec is None:
            known = ", ".join(self.names()) or "none"
            return ToolResult(sanitize_error(f"unknown tool {name!r}; available: {known}"), True)
        try:
            args = parse_arguments(raw_arguments)
        except ToolArgumentError as exc:
            return ToolResult(sanitize_error(str(exc)), True)
        try:
            value = spec.handler(args, ctx)
        except ToolArgumentError as exc:
            return ToolResult(sanitize_error(str(exc)), True)
        except Exception as exc:  # a tool bug must not end the turn
            return ToolResult(sanitize_error(f"{name} failed: {type(exc).__name__}: {exc}"), True)
        return ToolResult(to_result_text(value))


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


registry = ToolRegistry()
