"""Tables and JSON for the CLI's list commands.

One rule for every list: identifiers (session ids, job names, task ids, plugin and
server names) and the other short columns are never wrapped or cut, because people copy
them into the next command; the one free-text column (a title, a description, a list of
tools) gives way instead: cut with an ellipsis, or folded onto indented lines. On a
terminal the header is bold; in a pipe or a file the table is plain text (no escape
codes, no box drawing). Widths are counted in terminal cells, so wide characters in a
title do not push an id out of line.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from herald.cli.common import write_stdout

GAP = "  "
MIN_FLEX = 10  # narrower than this and the free text is no use; the line grows instead


@dataclass(frozen=True)
class Column:
    """A column is shown whole unless it is `flex` (the one that gives way: cut with an
    ellipsis, or with `fold`, continued on indented lines)."""

    name: str
    flex: bool = False
    fold: bool = False


def table_lines(
    columns: Sequence[Column], rows: Iterable[Sequence[object]], width: int
) -> list[str]:
    """The table as plain lines for a terminal `width` cells wide."""
    from rich.cells import cell_len, set_cell_size

    cells = [[" ".join(str(cell).split()) for cell in row] for row in rows]
    widths = [
        max([cell_len(c.name), *(cell_len(r[i]) for r in cells)]) for i, c in enumerate(columns)
    ]
    fixed = sum(w for w, c in zip(widths, columns, strict=True) if not c.flex)
    room = width - fixed - len(GAP) * (len(columns) - 1)
    flexible = [i for i, c in enumerate(columns) if c.flex]
    for n, i in enumerate(flexible):  # earlier free-text columns first, each leaves room
        later = len(flexible) - n - 1
        share = max(room - MIN_FLEX * later, 0)
        widths[i] = max(min(widths[i], share), min(MIN_FLEX, widths[i]))
        room -= widths[i]
    lines = []
    for row in [[c.name for c in columns], *cells]:
        pieces: list[str] = []
        extra: list[str] = []
        indent = 0
        for i, (cell, column) in enumerate(zip(row, columns, strict=True)):
            last = i == len(columns) - 1
            if column.flex and cell_len(cell) > widths[i]:
                if column.fold:
                    chunks = _fold(cell, widths[i])
                    cell, extra = chunks[0], chunks[1:]
                    indent = sum(widths[:i]) + len(GAP) * i
                else:
                    cell = set_cell_size(cell, widths[i] - 1) + "…"
            pieces.append(cell if last else set_cell_size(cell, widths[i]))
            if not last:
                pieces.append(GAP)
        lines.append("".join(pieces).rstrip())
        lines += [" " * indent + chunk for chunk in extra]
    return lines


def _fold(text: str, width: int) -> list[str]:
    """Split at spaces where possible, else inside a word, into lines of `width` cells."""
    from rich.cells import cell_len, chop_cells

    lines: list[str] = []
    current = ""
    for word in text.split(" "):
        candidate = f"{current} {word}" if current else word
        if cell_len(candidate) <= width:
            current = candidate
            continue
        if current:
            lines.append(current)
        pieces = chop_cells(word, width) if cell_len(word) > width else [word]
        lines += pieces[:-1]
        current = pieces[-1]
    return [*lines, current] if current else lines or [""]


def print_table(columns: Sequence[Column], rows: Iterable[Sequence[object]]) -> None:
    terminal = sys.stdout.isatty()
    width = shutil.get_terminal_size((80, 24)).columns if terminal else _pipe_width()
    lines = table_lines(columns, rows, width)
    if terminal and lines:
        lines[0] = f"\x1b[1m{lines[0]}\x1b[0m"
    write_stdout("\n".join(lines) + "\n")


def _pipe_width() -> int:
    """In a pipe nothing is cut by a screen: a generous width (COLUMNS if set)."""
    try:
        return max(40, int(os.environ.get("COLUMNS", "")))
    except ValueError:
        return 200


def print_json(data: Any) -> None:
    write_stdout(json.dumps(data, indent=2, default=str, ensure_ascii=False) + "\n")


__all__ = ["Column", "print_json", "print_table", "table_lines"]
