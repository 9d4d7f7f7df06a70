"""Tools (L2): the registry the engine dispatches through, and the tools the model can call.

Importing this package registers the built-in tools on `registry`.
"""

from herald.tools import todo as _todo  # noqa: F401  (self-registers)
from herald.tools.registry import (
    ERROR_PREFIX,
    ToolArgumentError,
    ToolContext,
    ToolRegistry,
    ToolResult,
    ToolSpec,
    parse_arguments,
    registry,
    sanitize_error,
)

__all__ = [
    "ERROR_PREFIX",
    "ToolArgumentError",
    "ToolContext",
    "ToolRegistry",
    "ToolResult",
    "ToolSpec",
    "parse_arguments",
    "registry",
    "sanitize_error",
]
