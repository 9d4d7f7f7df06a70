"""The `write_file` tool: create or replace a whole file, atomically, through the
session's environment (parent directories are created)."""

from __future__ import annotations

from herald.tools.consequence import path_outside_scratch
from herald.tools.declare import tool
from herald.tools.file_common import (
    directory_error,
    require_environment,
    resolve_path,
    split_lines,
)
from herald.tools.registry import ToolArgumentError, ToolContext
from herald.tools.write_gate import gate_write


@tool(
    toolset="file",
    writes=("path",),
    max_result_chars=2_000,
    controls=("path",),
    consequential=True,
    consequence=path_outside_scratch(),
)
def write_file(ctx: ToolContext, path: str, content: str) -> str:
    """Create or overwrite a file with the given content (parent directories are created).
    For small edits to an existing file use patch.

    Args:
        content: the complete new file content ("" for an empty file)
    """
    env = require_environment(ctx)
    target = resolve_path(env, path)
    shown = path.strip()
    # Sensitive targets need the same approval as a shell write.
    gate_write("write_file", target, ctx, env)
    if path.rstrip().endswith("/"):
        raise ToolArgumentError(f"{shown} ends with '/': give a file path, not a directory")
    before = env.stat(target)
    if before is not None and before.is_dir:
        raise directory_error(env, target, shown)
    data = content.encode("utf-8")
    try:
        env.write_bytes(target, data)
    except PermissionError:
        raise ToolArgumentError(f"permission denied writing {shown}") from None
    except (NotADirectoryError, IsADirectoryError, FileExistsError) as exc:
        raise ToolArgumentError(
            f"cannot write {shown}: {exc.strerror or exc} (a parent path is not a directory?)"
        ) from None
    lines = len(split_lines(content))
    if before is None:
        return f"Created {shown} ({len(data):,} bytes, {lines} lines)."
    return f"Replaced {shown} ({len(data):,} bytes, {lines} lines; was {before.size:,} bytes)."
