"""The `patch` tool: targeted edits to an existing text file.

Two modes: `old_text`/`new_text` (an exact find/replace that must match once,
unless `replace_all`) and `diff` (a unified diff, see `file_diff`). A miss
returns the closest candidate lines and an ambiguous match returns every line
where it matched, so the model can fix its next call without re-reading the
whole file. CRLF files and a UTF-8 BOM are preserved.
"""

from __future__ import annotations

import difflib
import heapq
import re
from collections import Counter, deque

from herald.tools.consequence import path_outside_scratch
from herald.tools.declare import Flag, tool
from herald.tools.file_common import TextFile, read_text, require_environment, resolve_path
from herald.tools.file_diff import DiffError, apply_unified_diff
from herald.tools.registry import ToolArgumentError, ToolContext
from herald.tools.write_gate import gate_write

MAX_LISTED_MATCHES = 20
MAX_CANDIDATES = 3
MAX_CANDIDATE_LINES = 5
MAX_CANDIDATE_LINE_CHARS = 100
# Error results are cut at 2000 characters (registry.MAX_ERROR_CHARS): stay under it.
MAX_MESSAGE_CHARS = 1800
PREVIEW_LINES = 40
PREVIEW_CHARS = 3000
_SCAN_BUDGET = 3_000_000  # characters of the file read when looking for near misses
SHORTLIST = 12  # near-miss windows compared character by character
PAIR_LIMIT = 1_000_000  # window x old_text length compared so; above, trigrams decide


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def _find_all(text: str, needle: str) -> list[int]:
    found, start = [], 0
    while (index := text.find(needle, start)) != -1:
        found.append(index)
        start = index + len(needle)
    return found


def _numbered(lines: list[str], first: int, limit: int = MAX_CANDIDATE_LINES) -> str:
    rows = [
        f"    {first + i}: {line[:MAX_CANDIDATE_LINE_CHARS]}"
        + ("…" * (len(line) > MAX_CANDIDATE_LINE_CHARS))
        for i, line in enumerate(lines[:limit])
    ]
    if len(lines) > limit:
        rows.append(f"    … ({len(lines) - limit} more lines)")
    return "\n".join(rows)


def _whitespace_match(text: str, old: str) -> tuple[int, int] | None:
    """(first, last) line of the one place `old` matches when runs of whitespace
    (indentation, tabs, trailing spaces, line breaks) may differ, else None."""
    pieces = old.split()
    if not pieces:
        return None
    regex = re.compile(r"\s+".join(re.escape(p) for p in pieces))
    found = [m for _, m in zip(range(2), regex.finditer(text), strict=False)]
    if len(found) != 1:
        return None
    start, end = found[0].span()
    return _line_of(text, start), _line_of(text, max(end - 1, start))


def closest_candidates(text: str, old: str) -> list[tuple[int, float, list[str]]]:
    """Up to MAX_CANDIDATES (first line, similarity, lines) windows most like `old`.

    Every window of as many lines as `old` is scored by the character trigrams it
    shares with `old`, in one pass over the file; only the SHORTLIST best are compared
    character by character (difflib's ratio), and only when the pair is small enough
    for it (PAIR_LIMIT). Comparing every window by ratio, which grows with the product
    of the lengths, took 200 s for 40 lines that missed in a 1,800-line file."""
    lines = text.split("\n")
    wanted = old.strip("\n").split("\n")
    size = min(len(wanted), len(lines))
    target = "\n".join(wanted)
    matcher = difflib.SequenceMatcher(autojunk=False)
    matcher.set_seq2(target)
    floor = 0.4
    scored: list[tuple[float, int]] = []
    for shared, p in _trigram_shortlist(lines, size, wanted):
        window = "\n".join(lines[p : p + size])
        ratio = shared
        if len(window) * len(target) <= PAIR_LIMIT:
            matcher.set_seq1(window)
            ratio = matcher.ratio()
        if ratio >= floor:
            scored.append((ratio, p))
    best = sorted(scored, key=lambda item: (-item[0], item[1]))
    picked: list[tuple[int, float, list[str]]] = []
    for ratio, p in best:
        if best[0][0] - ratio > 0.2:
            break  # far worse than the best: noise
        if any(abs(p + 1 - first) < size for first, _, _ in picked):
            continue  # overlapping windows show the same place twice
        picked.append((p + 1, ratio, lines[p : p + size]))
        if len(picked) == MAX_CANDIDATES:
            break
    return picked


def _trigrams(line: str) -> list[str]:
    padded = line + "\n"  # a line's break is part of what it looks like
    return [padded[i : i + 3] for i in range(len(padded) - 2)]


def _trigram_shortlist(lines: list[str], size: int, wanted: list[str]) -> list[tuple[float, int]]:
    """The SHORTLIST windows of `size` lines sharing the most trigrams with `wanted`
    (Dice: twice the shared count over both counts), best first, as (score, first
    index). The window slides a line at a time, its counts updated, not recounted
    (each line's trigrams are kept while it is in the window); the scan stops after
    _SCAN_BUDGET characters."""
    want = Counter(gram for line in wanted for gram in _trigrams(line))
    want_total = sum(want.values())
    have: Counter[str] = Counter()
    window: deque[list[str]] = deque()
    shared = have_total = 0
    budget = _SCAN_BUDGET
    scores: list[tuple[float, int]] = []
    for index, line in enumerate(lines):
        budget -= len(line) + 1
        if budget < 0:
            break
        window.append(_trigrams(line))
        for gram in window[-1]:
            shared += have[gram] < want[gram]
            have[gram] += 1
        have_total += len(window[-1])
        if len(window) > size:
            leaving = window.popleft()
            for gram in leaving:
                have[gram] -= 1
                shared -= have[gram] < want[gram]
            have_total -= len(leaving)
        first = index - size + 1
        if first >= 0 and have_total + want_total:
            scores.append((2.0 * shared / (have_total + want_total), first))
    return heapq.nsmallest(SHORTLIST, scores, key=lambda item: (-item[0], item[1]))


def _not_found_message(shown: str, text: str, old: str) -> str:
    span = _whitespace_match(text, old)
    if span is not None:
        first, last = span
        lines = text.split("\n")[first - 1 : last]
        return (
            f"old_text was not found in {shown} exactly, but it matches lines {first}-{last} "
            "when whitespace (indentation, tabs, line breaks) is ignored. The file has:\n"
            f"{_numbered(lines, first)}\n"
            "Copy the whitespace exactly (no 'N: ' prefixes) and retry."
        )
    candidates = closest_candidates(text, old)
    if not candidates:
        return (
            f"old_text was not found in {shown} and nothing similar is there; "
            "read_file it again and copy the text exactly."
        )
    parts = [f"old_text was not found in {shown}. Closest candidates:"]
    tail = "Copy the exact current text (without the 'N: ' prefixes) and retry."
    used = len(parts[0]) + len(tail)
    for first, ratio, cand in candidates:
        last = first + len(cand) - 1
        block = f"  lines {first}-{last} ({ratio:.0%} similar):\n{_numbered(cand, first)}"
        if used + len(block) > MAX_MESSAGE_CHARS and len(parts) > 1:
            break
        parts.append(block)
        used += len(block) + 1
    parts.append(tail)
    return "\n".join(parts)


def _ambiguous_message(shown: str, text: str, positions: list[int]) -> str:
    lines = ", ".join(str(_line_of(text, i)) for i in positions[:MAX_LISTED_MATCHES])
    more = (
        f" (and {len(positions) - MAX_LISTED_MATCHES} more)"
        if len(positions) > MAX_LISTED_MATCHES
        else ""
    )
    return (
        f"old_text matches {len(positions)} places in {shown}, at lines {lines}{more}. "
        "Include more surrounding lines so it matches exactly one, or set replace_all=true."
    )


def diff_preview(before: str, after: str) -> tuple[str, int, int]:
    """A short unified diff of the change, and the added/removed line counts."""
    rows = list(difflib.unified_diff(before.split("\n"), after.split("\n"), n=1, lineterm=""))[2:]
    added = sum(1 for r in rows if r.startswith("+"))
    removed = sum(1 for r in rows if r.startswith("-"))
    text = "\n".join(rows[:PREVIEW_LINES])
    if len(rows) > PREVIEW_LINES or len(text) > PREVIEW_CHARS:
        text = text[:PREVIEW_CHARS] + "\n… (preview cut)"
    return text, added, removed


def _replace(
    shown: str, text: str, old: str, new: str | None, replace_all: bool, crlf: bool
) -> tuple[str, str]:
    if new is None:
        raise ToolArgumentError('new_text is required with old_text (use "" to delete)')
    if crlf:
        old, new = old.replace("\r\n", "\n"), new.replace("\r\n", "\n")
    if old == "":
        raise ToolArgumentError("old_text is empty; to create or overwrite a file use write_file")
    if old == new:
        raise ToolArgumentError("old_text and new_text are identical; nothing to change")
    positions = _find_all(text, old)
    if not positions:
        raise ToolArgumentError(_not_found_message(shown, text, old))
    if len(positions) > 1 and not replace_all:
        raise ToolArgumentError(_ambiguous_message(shown, text, positions))
    count = len(positions) if replace_all else 1
    where = ", ".join(str(_line_of(text, i)) for i in positions[:MAX_LISTED_MATCHES])
    noun = "match" if count == 1 else "matches"
    return text.replace(
        old, new, count
    ), f"replaced {count} {noun} at line{'s' * (count > 1)} {where}"


def _apply_diff(shown: str, text: str, diff: str) -> tuple[str, str]:
    try:
        result, applied = apply_unified_diff(text, diff)
    except DiffError as exc:
        raise ToolArgumentError(f"diff not applied to {shown} (file unchanged): {exc}") from None
    moved = [
        f"hunk {a.index} at line {a.line} (header said {a.expected})"
        for a in applied
        if a.expected is not None and a.expected != a.line
    ]
    note = f"; offsets: {', '.join(moved)}" if moved else ""
    noun = "hunk" if len(applied) == 1 else "hunks"
    return result, f"applied {len(applied)} {noun}{note}"


@tool(
    toolset="file",
    writes=("path",),
    max_result_chars=10_000,
    controls=("path",),
    consequential=True,
    consequence=path_outside_scratch(),
)
def patch(
    ctx: ToolContext,
    path: str,
    old_text: str | None = None,
    new_text: str | None = None,
    diff: str | None = None,
    replace_all: Flag | None = None,
) -> str:
    """Edit a text file: replace old_text (exact, must match once; add surrounding lines to
    make it unique) with new_text, or apply a unified diff.

    Args:
        diff: unified diff with @@ hunks
        replace_all: replace every match
    """
    env = require_environment(ctx)
    target = resolve_path(env, path)
    shown = path.strip()
    # Sensitive targets need the same approval as a shell write.
    gate_write("patch", target, ctx, env)
    if diff is not None and old_text is not None:
        raise ToolArgumentError("give either old_text/new_text or diff, not both")
    if diff is None and old_text is None:
        raise ToolArgumentError(
            "give old_text and new_text (exact replacement) or diff (a unified diff)"
        )
    file = read_text(env, target, shown)
    if file.truncated:
        raise ToolArgumentError(
            f"{shown} is too large to patch ({file.size:,} bytes); edit it with the terminal"
        )
    text, crlf = _normalise(file)
    if diff is not None:
        updated, what = _apply_diff(shown, text, diff)
    else:
        updated, what = _replace(shown, text, old_text or "", new_text, bool(replace_all), crlf)
    if updated == text:
        return f"{shown} unchanged: {what}, but the result is identical to the file."
    preview, added, removed = diff_preview(text, updated)
    out = updated.replace("\n", "\r\n") if crlf else updated
    data = (b"\xef\xbb\xbf" if file.bom else b"") + out.encode("utf-8")
    try:
        env.write_bytes(target, data)
    except PermissionError:
        raise ToolArgumentError(f"permission denied writing {shown}") from None
    return f"Patched {shown}: {what} (+{added} -{removed} lines).\n{preview}"


def _normalise(file: TextFile) -> tuple[str, bool]:
    """LF text to work on, and whether the file uses CRLF line endings throughout."""
    text = file.text
    crlf = "\r\n" in text and text.count("\r\n") == text.count("\n")
    return (text.replace("\r\n", "\n") if crlf else text), crlf
