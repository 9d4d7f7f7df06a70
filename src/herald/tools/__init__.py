"""Tools (L2): the registry the engine dispatches through, and the tools the model can call.

A `ToolRegistry` is a value its surface owns (`herald.toolbox` composes the
capabilities' tools into one); nothing registers by being imported. Toolsets
decide which of a registry's tools a surface exposes; the planner and the guardrail
controller are the pure parts of a tool round the engine runs. The approval gates
(`herald.tools.terminal_approval`, `herald.tools.write_gate`) are imported from their
modules by what uses them: they bring in every command backend, which a turn that never
runs a command does not need at start-up.
"""

from herald.tools.change_intent import ChangeIntent, change_intent, command_may_write
from herald.tools.coercion import coerce_arguments
from herald.tools.declare import tool
from herald.tools.definitions import (
    DefinitionsCache,
    ToolSelection,
    definitions_cache,
    select_tools,
)
from herald.tools.guardrails import (
    GUARDRAIL_HEADER,
    GuardrailController,
    GuardrailDecision,
    attach_guardrail,
    is_unattended,
    resolve_hard_stop,
)
from herald.tools.hooks import HOOK_EVENTS, ToolHooks
from herald.tools.offers import Offered, ToolOffer
from herald.tools.planner import PARALLEL, SEQUENTIAL, canonical_path, plan_tool_batch
from herald.tools.ports import (
    ChangeGuard,
    HistoryStore,
    MemoryHandle,
    NestedTools,
    RequestSnapshot,
)
from herald.tools.registry import (
    DEFAULT_MAX_RESULT_CHARS,
    ERROR_PREFIX,
    MAX_ERROR_CHARS,
    DeclaredTools,
    PathScope,
    ToolArgumentError,
    ToolContext,
    ToolOverlay,
    ToolRegistry,
    ToolResult,
    ToolSpec,
    check_path_arguments,
    parse_arguments,
    sanitize_error,
)
from herald.tools.results import limit_result
from herald.tools.toolsets import (
    BUILTIN_TOOLSETS,
    DEFAULT_BUNDLE,
    CheckCache,
    Toolset,
    ToolsetError,
    available_tool_names,
    is_available,
    resolve_toolset,
)

__all__ = [
    "BUILTIN_TOOLSETS",
    "DEFAULT_BUNDLE",
    "DEFAULT_MAX_RESULT_CHARS",
    "ERROR_PREFIX",
    "GUARDRAIL_HEADER",
    "HOOK_EVENTS",
    "MAX_ERROR_CHARS",
    "PARALLEL",
    "SEQUENTIAL",
    "ChangeGuard",
    "ChangeIntent",
    "CheckCache",
    "DeclaredTools",
    "DefinitionsCache",
    "GuardrailController",
    "GuardrailDecision",
    "HistoryStore",
    "MemoryHandle",
    "NestedTools",
    "Offered",
    "PathScope",
    "RequestSnapshot",
    "ToolArgumentError",
    "ToolContext",
    "ToolHooks",
    "ToolOffer",
    "ToolOverlay",
    "ToolRegistry",
    "ToolResult",
    "ToolSelection",
    "ToolSpec",
    "Toolset",
    "ToolsetError",
    "attach_guardrail",
    "available_tool_names",
    "canonical_path",
    "change_intent",
    "check_path_arguments",
    "coerce_arguments",
    "command_may_write",
    "definitions_cache",
    "is_available",
    "is_unattended",
    "limit_result",
    "parse_arguments",
    "plan_tool_batch",
    "resolve_hard_stop",
    "resolve_toolset",
    "sanitize_error",
    "select_tools",
    "tool",
]
