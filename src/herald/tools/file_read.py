"""The `read_file` tool: a text file as numbered lines, a window at a time.

Lines are shown as ``N: text`` (N is the 1-based line number, as grep and
editors count them). When lines remain, the result ends with the exact
`offset` to continue from, so the model never guesses.
"""

from __future__ import annotations

from typing import Any

from herald.tools.file_common import (
    int_arg,
    read_text,
    require_environment,
    resolve_path,
    split_lines,
    str_arg,
)
from herald.tools.registry import ToolArgumentError, ToolContext

DEFAULT_LIMIT = 400
MAX_LIMIT = 2000
MAX_LINE_CHARS = 2000
MAX_OUTPUT_CHARS = 50_000

SCHEMA: dict[str, Any] = {
    "description": (
        "Read a text file as numbered lines ('N: text'). Use offset/limit to page "
        "through long files."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "offset": {"type": "integer", "description": "first line, 1-based"},
            "limit": {"type": "integer", "description": f"max lines (default {DEFAULT_LIMIT})"},
        },
        "required": ["path"],
    },
}


def format_lines(
    lines: list[str], first: int, *, budget: int = MAX_OUTPUT_CHARS
) -> tuple[str, int]:
    """`lines` numbered from `first`, within `budget` characters; returns the text and
    how many lines it holds (at least one, so paging always makes progress)."""
    out: list[str] = []
    used = 0
    for i, line in enumerate(lines):
        if len(line) > MAX_LINE_CHARS:
            line = f"{line[:MAX_LINE_CHARS]}… [line cut: {len(line):,} chars]"
        row = f"{first + i}: {line}"
        if out and used + len(row) + 1 > budget:
            break
        out.append(row)
        used += len(row) + 1
    return "\n".join(out), len(out)


def handle_read_file(args: dict[str, Any], ctx: ToolContext) -> str:
    env = require_environment(ctx)
    raw = str_arg(args, "path")
    path = resolve_path(env, raw)
    offset = int_arg(args, "offset", 1)
    limit = min(int_arg(args, "limit", DEFAULT_LIMIT), MAX_LIMIT)
    shown = raw.strip() if raw else path
    file = read_text(env, path, shown)
    lines = split_lines(file.text)
    total = len(lines)
    if total == 0:
        return f"{shown} is empty (0 lines)."
    if offset > total:
        raise ToolArgumentError(
            f"offset {offset} is past the end of {shown}, which has {total} lines"
            + (" in the part read_file can load" if file.truncated else "")
        )
    body, shown_count = format_lines(lines[offset - 1 : offset - 1 + limit], offset)
    last = offset + shown_count - 1
    notes: list[str] = []
    if last < total:
        notes.append(
            f"[lines {offset}-{last} of {total}; {total - last} more: "
            f"read_file with offset={last + 1}]"
        )
    elif offset > 1:
        notes.append(f"[lines {offset}-{last} of {total}; end of file]")
    if file.truncated:
        notes.append(
            f"[only the first {len(file.text.encode()):,} of {file.size:,} bytes were loaded; "
            "use the terminal (e.g. tail, sed -n) for the rest]"
        )
    return "\n".join([body, *notes])
