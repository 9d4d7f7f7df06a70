"""A small, strict unified-diff applier for one file (the `patch` tool's diff mode).

Strict on content: every context and removed line must be in the file (a
difference in trailing whitespace only is tolerated; the file's own line is
kept). Tolerant on position: the header's line numbers are a hint, the
nearest match within `NEAR_LINES` wins, and a match further away is used only
when it is the only one. Header line counts are not trusted (models get them
wrong); the hunk body is. Nothing is written unless every hunk applies.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

NEAR_LINES = 10
_HUNK_RE = re.compile(r"^@@+ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@+")
_BARE_HUNK_RE = re.compile(r"^@@+(?:\s.*)?$")


class DiffError(ValueError):
    """The diff cannot be parsed or applied; the message says which hunk and why."""


@dataclass
class Hunk:
    index: int  # 1-based, for messages
    header: str
    old_start: int | None  # 1-based line number from the header, None for a bare "@@"
    lines: list[tuple[str, str]] = field(default_factory=list)  # (" " | "-" | "+", text)
    old_no_eol: bool = False
    new_no_eol: bool = False

    @property
    def old(self) -> list[str]:
        return [text for op, text in self.lines if op != "+"]

    @property
    def new(self) -> list[str]:
        return [text for op, text in self.lines if op != "-"]

    @property
    def marks_eol(self) -> bool:
        return self.old_no_eol or self.new_no_eol


@dataclass(frozen=True)
class AppliedHunk:
    index: int
    line: int  # 1-based line in the original file where the hunk applied
    expected: int | None  # where the header said it would


def parse_unified_diff(diff: str) -> list[Hunk]:
    rows = diff.replace("\r\n", "\n").split("\n")
    while rows and rows[-1] == "":
        rows.pop()
    if any(row.startswith("*** Begin Patch") for row in rows[:3]):
        raise DiffError("this is not a unified diff; send one with @@ hunk headers")
    targets = {row[4:].split("\t")[0].strip() for row in rows if row.startswith("+++ ")}
    if len(targets) > 1:
        raise DiffError(f"the diff touches {len(targets)} files; send one patch call per file")
    hunks: list[Hunk] = []
    current: Hunk | None = None
    for number, row in enumerate(rows, 1):
        match = _HUNK_RE.match(row)
        if match or _BARE_HUNK_RE.match(row):
            start = int(match.group(1)) if match else None
            current = Hunk(index=len(hunks) + 1, header=row.strip(), old_start=start)
            hunks.append(current)
            continue
        if current is None or row.startswith(("diff ", "+++ ")) or _is_file_header(rows, number):
            current = None  # file headers and text before the first hunk
            continue
        op = row[:1]
        if op in (" ", "-", "+"):
            current.lines.append((op, row[1:]))
        elif row == "":
            current.lines.append((" ", ""))  # a blank context line whose space was stripped
        elif op == "\\":
            if not current.lines:
                raise DiffError(f"hunk {current.index}: '\\ No newline' marker before any line")
            last = current.lines[-1][0]
            if last in (" ", "-"):
                current.old_no_eol = True
            if last in (" ", "+"):
                current.new_no_eol = True
        else:
            raise DiffError(
                f"hunk {current.index} ({current.header}): diff line {number} {row[:60]!r} "
                "does not start with ' ', '-' or '+'"
            )
    if not hunks:
        raise DiffError("no hunks found: a unified diff needs '@@ -a,b +c,d @@' hunk headers")
    for hunk in hunks:
        if not any(op != " " for op, _ in hunk.lines):
            raise DiffError(f"hunk {hunk.index} ({hunk.header}) has no '-' or '+' lines")
    return hunks


def _is_file_header(rows: list[str], number: int) -> bool:
    """A '--- a/x' line directly followed by '+++ b/x' starts a file header, not a removal."""
    row = rows[number - 1]
    return row.startswith("--- ") and number < len(rows) and rows[number].startswith("+++ ")


def _matches(lines: list[str], at: int, want: list[str]) -> bool:
    if at < 0 or at + len(want) > len(lines):
        return False
    return all(
        have == need or have.rstrip() == need.rstrip()
        for have, need in zip(lines[at : at + len(want)], want, strict=True)
    )


def _expected_index(hunk: Hunk) -> int | None:
    if hunk.old_start is None:
        return None
    # "-N,0" means "insert after line N"; otherwise N is the first old line.
    return hunk.old_start if not hunk.old else max(hunk.old_start - 1, 0)


def _locate(lines: list[str], hunk: Hunk, cursor: int) -> int:
    old = hunk.old
    expected = _expected_index(hunk)
    if not old:
        if expected is None:
            raise DiffError(
                f"hunk {hunk.index} ({hunk.header}) only adds lines and has no line number: "
                "add a few context lines so its place is clear"
            )
        if expected < cursor or expected > len(lines):
            raise DiffError(
                f"hunk {hunk.index} ({hunk.header}) inserts after line {expected}, but the file "
                f"has {len(lines)} lines (or an earlier hunk already covers it)"
            )
        return expected
    found = [p for p in range(cursor, len(lines) - len(old) + 1) if _matches(lines, p, old)]
    if expected is not None:
        near = [p for p in found if abs(p - expected) <= NEAR_LINES]
        if near:
            return min(near, key=lambda p: (abs(p - expected), p))
    if len(found) == 1:
        return found[0]
    if len(found) > 1:
        where = ", ".join(str(p + 1) for p in found[:10])
        hint = f"near line {expected + 1}" if expected is not None else "with no line number"
        raise DiffError(
            f"hunk {hunk.index} ({hunk.header}) is ambiguous: its lines match at lines {where} "
            f"but none {hint}; fix the @@ line numbers or add context"
        )
    raise DiffError(_mismatch_message(lines, hunk, cursor, expected))


def _mismatch_message(lines: list[str], hunk: Hunk, cursor: int, expected: int | None) -> str:
    """Where the hunk comes closest to fitting, and the first line that differs there."""
    old = hunk.old
    head = f"hunk {hunk.index} ({hunk.header}) does not apply"
    last = len(lines) - len(old)
    if last < cursor:
        return f"{head}: it needs {len(old)} lines but only {len(lines) - cursor} remain"
    if (last - cursor + 1) * len(old) > 4_000_000:
        return f"{head}: its context and removed lines are not in the file"
    target = expected if expected is not None else cursor
    best, best_score = cursor, -1
    for p in range(cursor, last + 1):
        score = sum(
            1
            for have, need in zip(lines[p : p + len(old)], old, strict=True)
            if have.rstrip() == need.rstrip()
        )
        if score > best_score or (score == best_score and abs(p - target) < abs(best - target)):
            best, best_score = p, score
    if best_score <= 0:
        return f"{head}: none of its context or removed lines are in the file; re-read the file"
    for i, need in enumerate(old):
        have = lines[best + i]
        if have.rstrip() != need.rstrip():
            return (
                f"{head}: closest fit is at line {best + 1} ({best_score}/{len(old)} lines "
                f"match), but line {best + i + 1} is {have[:120]!r} where the diff expects "
                f"{need[:120]!r}; re-read the file and resend the hunk"
            )
    return head  # unreachable: a full match would have been found


def apply_hunks(
    lines: list[str], hunks: list[Hunk], *, eol_at_eof: bool = True
) -> tuple[list[str], bool, list[AppliedHunk]]:
    """The patched lines, whether the file ends with a newline, and where each hunk went."""
    out: list[str] = []
    cursor = 0
    applied: list[AppliedHunk] = []
    for hunk in hunks:
        at = _locate(lines, hunk, cursor)
        expected = _expected_index(hunk)
        out.extend(lines[cursor:at])
        end = at + len(hunk.old)
        # Context lines keep the file's own text (whitespace included).
        file_old = iter(lines[at:end])
        for op, text in hunk.lines:
            if op == " ":
                out.append(next(file_old))
            elif op == "-":
                next(file_old)
            else:
                out.append(text)
        cursor = end
        if end == len(lines) and hunk.marks_eol:
            eol_at_eof = not hunk.new_no_eol
        applied.append(AppliedHunk(hunk.index, at + 1, None if expected is None else expected + 1))
    out.extend(lines[cursor:])
    return out, eol_at_eof, applied


def apply_unified_diff(text: str, diff: str) -> tuple[str, list[AppliedHunk]]:
    """`text` with `diff` applied (LF line endings in, LF out)."""
    hunks = parse_unified_diff(diff)
    lines = text.split("\n")
    eol = text.endswith("\n") or not text
    if lines and lines[-1] == "":
        lines.pop()
    new_lines, new_eol, applied = apply_hunks(lines, hunks, eol_at_eof=eol)
    result = "\n".join(new_lines)
    if new_lines and new_eol:
        result += "\n"
    return result, applied
