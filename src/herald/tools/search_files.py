"""The `search_files` tool: regex search in file contents, or a glob over file names.

Runs ripgrep through the session's environment when it is installed there
(checked once per environment); otherwise a Python walk on local environments
and grep/find on remote ones (see `file_search`). Results are bounded (matches,
characters per line, total characters) and say when they were cut.
"""

from __future__ import annotations

from typing import Literal

from herald.tools.declare import tool
from herald.tools.file_common import (
    display_path,
    not_regular_message,
    require_environment,
    resolve_path,
    stat_existing,
)
from herald.tools.file_search import (
    IGNORED_DIRS,
    SearchError,
    SearchOutcome,
    grep_search,
    python_search,
    rg_available,
    rg_search,
)
from herald.tools.read_gate import gate_read, secret_refusal
from herald.tools.registry import ToolArgumentError, ToolContext, ToolRegistry, ToolSpec

MAX_MATCHES = 200
MAX_FILES = 500
MAX_OUTPUT_CHARS = 30_000
Mode = Literal["content", "files"]


def _is_local(ctx: ToolContext) -> bool:
    return getattr(ctx.environment, "name", "") == "local"


def run_search(
    ctx: ToolContext, root: str, mode: str, pattern: str, glob: str | None, *, engine: str = "auto"
) -> SearchOutcome:
    """Search with the best engine available (`engine` forces one: rg | python | grep)."""
    env = require_environment(ctx)
    limit = MAX_FILES if mode == "files" else MAX_MATCHES
    if engine == "auto":
        engine = "rg" if rg_available(env) else ("python" if _is_local(ctx) else "grep")
    try:
        if engine == "rg":
            return rg_search(env, root, mode, pattern, glob, limit, ctx.cancel)
        if engine == "grep":
            return grep_search(env, root, mode, pattern, glob, limit, ctx.cancel)
        return python_search(root, mode, pattern, glob, limit, ctx.cancel)
    except SearchError as exc:
        raise ToolArgumentError(str(exc)) from None


def format_outcome(
    ctx: ToolContext, outcome: SearchOutcome, mode: str, pattern: str, where: str
) -> str:
    env = require_environment(ctx)
    rows: list[str] = []
    used = 0
    cut_for_size = False
    items: list[str] = (
        [display_path(env, f) for f in outcome.files]
        if mode == "files"
        else [f"{display_path(env, m.path)}:{m.line}: {m.text}" for m in outcome.matches]
    )
    for row in items:
        if used + len(row) + 1 > MAX_OUTPUT_CHARS:
            cut_for_size = True
            break
        rows.append(row)
        used += len(row) + 1
    if not rows:
        what = "files named" if mode == "files" else "lines matching"
        return f"No {what} {pattern!r} under {where}." + "".join(f"\n[{n}]" for n in outcome.notes)
    if mode == "files":
        summary = f"{len(rows)} file{'s' * (len(rows) != 1)}"
    else:
        files = len({m.path for m in outcome.matches[: len(rows)]})
        summary = f"{len(rows)} match{'es' * (len(rows) != 1)} in {files} file{'s' * (files != 1)}"
    notes = list(outcome.notes)
    if outcome.truncated or cut_for_size:
        notes.insert(
            0,
            f"results cut at {summary}; more exist: narrow the pattern or path"
            + (", or add glob" if mode == "content" else ""),
        )
    return "\n".join([*rows, *(f"[{n}]" for n in notes)])


@tool(
    toolset="file",
    parallel_safe=True,
    reads=("path",),
    max_result_chars=MAX_OUTPUT_CHARS + 2_000,
)
def search_files(
    ctx: ToolContext,
    pattern: str,
    path: str | None = None,
    mode: Mode | None = None,
    glob: str | None = None,
) -> str:
    """Search files under path (default: working directory). mode=content (default): lines
    matching a regex; mode=files: file names matching a glob (e.g. '*.py',
    'src/**/test_*.py'). Skips .git, node_modules, .venv and binary files.

    Args:
        pattern: regex (content) or glob (files)
        glob: content mode: only files matching this
    """
    env = require_environment(ctx)
    if not pattern.strip():
        raise ToolArgumentError("pattern must not be empty")
    # Empty or null optional arguments mean "not given" (models that fill every field).
    mode = mode or "content"
    raw_path = (path or "").strip()
    root = resolve_path(env, raw_path) if raw_path else env.cwd
    where = raw_path or "the working directory"
    info = stat_existing(env, root, where)
    if not info.is_dir and not info.is_regular:  # ripgrep would wait on a named pipe
        raise ToolArgumentError(not_regular_message(where))
    gate_read(root, ctx, env)
    outcome = run_search(ctx, root, mode, pattern, glob or None)
    if mode == "content":  # names are fine; the lines of Herald's secret files are not
        hidden = [m for m in outcome.matches if secret_refusal(m.path, ctx, env) is not None]
        if hidden:
            outcome.matches = [m for m in outcome.matches if m not in hidden]
            outcome.notes.append(
                f"{len(hidden)} match{'es' * (len(hidden) != 1)} in Herald's secret files "
                "hidden [control.secret_read]"
            )
    return format_outcome(ctx, outcome, mode, pattern, where)


# Declared once, as values; the composition root (herald.toolbox) adds them.
TOOLS: tuple[ToolSpec, ...] = (search_files,)


def register(target: ToolRegistry) -> None:
    """Add these tools to `target` (tests build small registries this way)."""
    target.add(*TOOLS)


__all__ = [
    "IGNORED_DIRS",
    "MAX_FILES",
    "MAX_MATCHES",
    "TOOLS",
    "register",
    "run_search",
    "search_files",
]
