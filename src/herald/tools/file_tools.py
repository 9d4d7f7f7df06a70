"""The file tools (`read_file`, `write_file`, `patch`) in the "file" toolset.

They read and write through the session's `Environment`, the same backend the
terminal uses, so switching it (local, ssh) needs no change here. Importing
this module registers them on the shared registry.
"""

from __future__ import annotations

from herald.tools.file_patch import SCHEMA as PATCH_SCHEMA
from herald.tools.file_patch import handle_patch
from herald.tools.file_read import MAX_OUTPUT_CHARS as READ_MAX_CHARS
from herald.tools.file_read import SCHEMA as READ_SCHEMA
from herald.tools.file_read import handle_read_file
from herald.tools.file_write import SCHEMA as WRITE_SCHEMA
from herald.tools.file_write import handle_write_file
from herald.tools.registry import ToolRegistry, registry

TOOLSET = "file"


def register(target: ToolRegistry = registry) -> None:
    target.register(
        "read_file",
        TOOLSET,
        READ_SCHEMA,
        handle_read_file,
        parallel_safe=True,
        path_scope="read:path",
        # Above read_file's own cap, so its paging note is never spilled away.
        max_result_chars=READ_MAX_CHARS + 2_000,
    )
    target.register(
        "write_file",
        TOOLSET,
        WRITE_SCHEMA,
        handle_write_file,
        path_scope="write:path",
        max_result_chars=2_000,
    )
    target.register(
        "patch",
        TOOLSET,
        PATCH_SCHEMA,
        handle_patch,
        path_scope="write:path",
        max_result_chars=10_000,
    )


register()

__all__ = ["TOOLSET", "handle_patch", "handle_read_file", "handle_write_file", "register"]
