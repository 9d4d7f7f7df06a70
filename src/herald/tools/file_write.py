"""The `write_file` tool: create or replace a whole file, atomically, through the
session's environment (parent directories are created)."""

from __future__ import annotations

from typing import Any

from herald.tools.file_common import (
    directory_error,
    require_environment,
    resolve_path,
    split_lines,
    str_arg,
)
from herald.tools.registry import ToolArgumentError, ToolContext
from herald.tools.write_gate import gate_write

SCHEMA: dict[str, Any] = {
    "description": (
        "Create or overwrite a file with the given content (parent directories are "
        "created). For small edits to an existing file use patch."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "content": {"type": "string", "description": "the complete new file content"},
        },
        "required": ["path", "content"],
    },
}


def handle_write_file(args: dict[str, Any], ctx: ToolContext) -> str:
    env = require_environment(ctx)
    raw = str_arg(args, "path")
    path = resolve_path(env, raw)
    shown = raw.strip() if raw else path
    gate_write(
        "write_file", path, ctx, env
    )  # sensitive targets need the same approval as a shell write
    content = args.get("content")
    if content is None:
        raise ToolArgumentError("missing required argument 'content' (use \"\" for an empty file)")
    if not isinstance(content, str):
        raise ToolArgumentError(
            f"content must be a string, got {type(content).__name__}; "
            "serialise structured data (e.g. as JSON text) first"
        )
    if raw is not None and raw.rstrip().endswith("/"):
        raise ToolArgumentError(f"{shown} ends with '/': give a file path, not a directory")
    before = env.stat(path)
    if before is not None and before.is_dir:
        raise directory_error(env, path, shown)
    data = content.encode("utf-8")
    try:
        env.write_bytes(path, data)
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
