"""The `read_file` tool: a text file as numbered lines, a window at a time.

Lines are shown as ``N: text`` (N is the 1-based line number, as grep and
editors count them). When lines remain, the result ends with the exact
`offset` to continue from, so the model never guesses.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from herald.safety.provenance import untrusted
from herald.tools.declare import tool
from herald.tools.file_common import read_text, require_environment, resolve_path, split_lines
from herald.tools.read_gate import gate_read, untrusted_file_source
from herald.tools.registry import ToolArgumentError, ToolContext, ToolResult

DEFAULT_LIMIT = 400
MAX_LIMIT = 2000  # a larger limit is clamped to this, not refused
MAX_LINE_CHARS = 2000
MAX_OUTPUT_CHARS = 50_000

# After coercion ("5" -> 5, 5.0 -> 5) a line number must really be an integer: strict,
# so true/false are refused rather than read as 1/0.
LineCount = Annotated[int, Field(ge=1, strict=True)]


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


@tool(
    toolset="file",
    parallel_safe=True,
    reads=("path",),
    max_result_chars=MAX_OUTPUT_CHARS + 2_000,
)
def read_file(
    ctx: ToolContext,
    path: str,
    offset: LineCount | None = None,
    limit: LineCount | None = DEFAULT_LIMIT,
) -> str | ToolResult:
    """Read a text file as numbered lines ('N: text'). Use offset/limit to page through
    long files.

    Args:
        offset: first line, 1-based
        limit: max lines
    """
    # None for offset/limit is what a model that fills every field sends: the default.
    env = require_environment(ctx)
    target = resolve_path(env, path)
    gate_read(target, ctx, env)  # Herald's secrets are never a tool's to read
    shown = path.strip()
    offset = offset or 1
    limit = min(limit or DEFAULT_LIMIT, MAX_LIMIT)
    file = read_text(env, target, shown)
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
    text = "\n".join([body, *notes])
    source = untrusted_file_source(target, ctx, env)
    return ToolResult(text, provenance=untrusted(source)) if source else text
