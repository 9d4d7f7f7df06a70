"""The file tools (`read_file`, `write_file`, `patch`) in the "file" toolset.

They read and write through the session's `Environment`, the same backend the
terminal uses, so switching it (local, ssh) needs no change here. Each is
declared once, on its typed function; importing registers nothing.
"""

from __future__ import annotations

from herald.tools.file_patch import patch
from herald.tools.file_read import read_file
from herald.tools.file_write import write_file
from herald.tools.registry import ToolRegistry, ToolSpec

TOOLSET = "file"

# Declared once, as values; the composition root (herald.toolbox) adds them.
TOOLS: tuple[ToolSpec, ...] = (read_file, write_file, patch)


def register(target: ToolRegistry) -> None:
    """Add these tools to `target` (tests build small registries this way)."""
    target.add(*TOOLS)


__all__ = ["TOOLS", "TOOLSET", "patch", "read_file", "register", "write_file"]
