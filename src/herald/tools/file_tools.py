"""The file tools (`read_file`, `write_file`, `patch`) in the "file" toolset.

They read and write through the session's `Environment`, the same backend the
terminal uses, so switching it (local, ssh) needs no change here. Importing
this module registers them on the shared registry.
"""

from __future__ import annotations

from herald.tools.declare import tool
from herald.tools.file_patch import SCHEMA as PATCH_SCHEMA
from herald.tools.file_patch import handle_patch
from herald.tools.file_read import MAX_OUTPUT_CHARS as READ_MAX_CHARS
from herald.tools.file_read import SCHEMA as READ_SCHEMA
from herald.tools.file_read import handle_read_file
from herald.tools.file_write import SCHEMA as WRITE_SCHEMA
from herald.tools.file_write import handle_write_file
from herald.tools.registry import ToolRegistry, ToolSpec

TOOLSET = "file"


# Declared once, as values; the composition root (herald.toolbox) adds them.
TOOLS: tuple[ToolSpec, ...] = (
    tool(
        name="read_file",
        toolset=TOOLSET,
        schema=READ_SCHEMA,
        parallel_safe=True,
        reads=("path",),
        max_result_chars=READ_MAX_CHARS + 2_000,
    )(lambda ctx, **args: handle_read_file(args, ctx)),
    tool(
        name="write_file",
        toolset=TOOLSET,
        schema=WRITE_SCHEMA,
        writes=("path",),
        max_result_chars=2_000,
    )(lambda ctx, **args: handle_write_file(args, ctx)),
    tool(
        name="patch",
        toolset=TOOLSET,
        schema=PATCH_SCHEMA,
        writes=("path",),
        max_result_chars=10_000,
    )(lambda ctx, **args: handle_patch(args, ctx)),
)


def register(target: ToolRegistry) -> None:
    """Add these tools to `target` (tests build small registries this way)."""
    target.add(*TOOLS)


__all__ = ["TOOLS", "TOOLSET", "handle_patch", "handle_read_file", "handle_write_file", "register"]
