"""Memory (L2): what Herald remembers across sessions.

- Built-in memory: ``$HERALD_HOME/memories/MEMORY.md`` (the agent's notes) and
  ``USER.md`` (who the user is), entries separated by a ``§`` line, size-limited,
  written through the `memory` tool (`BuiltinMemory`: injection scan, file
  lock, clobber guard, de-duplication, atomic writes) and snapshotted into the
  system prompt when a session starts (`snapshot_blocks`).
- `MemoryProvider`: the contract for one external memory (the holographic fact
  store), recalled per turn by `MemoryManager` into a `<memory-context>` fence
  on the user message's API copy, never into the system prompt.
- The `session_search` tool: discovery, scroll, read and browse over every
  stored conversation (through `ToolContext.store`).

The `memory` and `session_search` tools are values (`herald.memory.tool.TOOLS`,
`herald.memory.session_search.TOOLS`) that `herald.toolbox` adds to the
built-in registry; importing this package registers nothing.
"""

from typing import TYPE_CHECKING

from herald.lazy import lazy_exports

if TYPE_CHECKING:  # for type checkers; at run time each name loads on first use
    from herald.memory.builtin import ACTIONS, BuiltinMemory, MemoryWriteResult
    from herald.memory.entries import (
        FILE_NAMES,
        SEPARATOR,
        TARGETS,
        format_usage,
        parse_entries,
        render_entries,
    )
    from herald.memory.files import MemoryFiles, MemoryLockTimeout
    from herald.memory.manager import (
        MemoryManager,
        MemoryProviderError,
        load_configured_provider,
    )
    from herald.memory.provider import MemoryProvider
    from herald.memory.recall import (
        FENCE_CLOSE,
        FENCE_OPEN,
        Recall,
        api_content_for,
        fence,
        is_trivial,
        query_for,
    )
    from herald.memory.session_search import SessionSearch
    from herald.memory.snapshot import memory_blocks, snapshot_blocks

_EXPORTS: dict[str, tuple[str, ...]] = {
    "herald.memory.builtin": (
        "ACTIONS",
        "BuiltinMemory",
        "MemoryWriteResult",
    ),
    "herald.memory.entries": (
        "FILE_NAMES",
        "SEPARATOR",
        "TARGETS",
        "format_usage",
        "parse_entries",
        "render_entries",
    ),
    "herald.memory.files": (
        "MemoryFiles",
        "MemoryLockTimeout",
    ),
    "herald.memory.manager": (
        "MemoryManager",
        "MemoryProviderError",
        "load_configured_provider",
    ),
    "herald.memory.provider": ("MemoryProvider",),
    "herald.memory.recall": (
        "FENCE_CLOSE",
        "FENCE_OPEN",
        "Recall",
        "api_content_for",
        "fence",
        "is_trivial",
        "query_for",
    ),
    "herald.memory.session_search": ("SessionSearch",),
    "herald.memory.snapshot": (
        "memory_blocks",
        "snapshot_blocks",
    ),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "ACTIONS",
    "FENCE_CLOSE",
    "FENCE_OPEN",
    "FILE_NAMES",
    "SEPARATOR",
    "TARGETS",
    "BuiltinMemory",
    "MemoryFiles",
    "MemoryLockTimeout",
    "MemoryManager",
    "MemoryProvider",
    "MemoryProviderError",
    "MemoryWriteResult",
    "Recall",
    "SessionSearch",
    "api_content_for",
    "fence",
    "format_usage",
    "is_trivial",
    "load_configured_provider",
    "memory_blocks",
    "parse_entries",
    "query_for",
    "render_entries",
    "snapshot_blocks",
]
