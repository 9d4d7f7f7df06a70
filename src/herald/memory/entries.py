"""The text format of MEMORY.md and USER.md: entries separated by a line holding `§`.

Pure functions only (no I/O), so the file store, the snapshot and the tool
all agree on what an entry is and how big a file is. The size that counts
against a limit is the length of the rendered entries (separators included,
no trailing newline): exactly what the system prompt will carry.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

import herald.safety as safety

Target = Literal["memory", "user"]
TARGETS: tuple[Target, ...] = ("memory", "user")
FILE_NAMES: dict[str, str] = {"memory": "MEMORY.md", "user": "USER.md"}
SEPARATOR = "§"
JOINER = f"\n{SEPARATOR}\n"

# A line whose only visible character is the separator.
_SEPARATOR_LINE = re.compile(rf"^[ \t]*{SEPARATOR}[ \t]*$", re.MULTILINE)
_WHITESPACE = re.compile(r"\s+")


def parse_entries(text: str) -> list[str]:
    """The non-empty, stripped entries of a memory file's text."""
    parts = _SEPARATOR_LINE.split(text.replace("\r\n", "\n"))
    return [part.strip() for part in parts if part.strip()]


def render_entries(entries: Sequence[str]) -> str:
    return JOINER.join(entries)


def file_text(entries: Sequence[str]) -> str:
    """What is written to disk: the rendered entries plus a final newline."""
    rendered = render_entries(entries)
    return rendered + "\n" if rendered else ""


def size_of(entries: Sequence[str]) -> int:
    return len(render_entries(entries))


def normalized(entry: str) -> str:
    """The comparison key for de-duplication: case and whitespace runs ignored."""
    return _WHITESPACE.sub(" ", entry).strip().casefold()


def dedupe(entries: Iterable[str]) -> list[str]:
    """`entries` without repeats (the first occurrence wins)."""
    seen: set[str] = set()
    out: list[str] = []
    for entry in entries:
        key = normalized(entry)
        if key and key not in seen:
            seen.add(key)
            out.append(entry)
    return out


def has_separator_line(content: str) -> bool:
    return _SEPARATOR_LINE.search(content) is not None


def find_matches(entries: Sequence[str], old_text: str) -> list[int]:
    """Indexes of the entries containing `old_text` (exact first, then ignoring case
    and whitespace runs)."""
    exact = [i for i, entry in enumerate(entries) if old_text in entry]
    if exact:
        return exact
    key = normalized(old_text)
    return [i for i, entry in enumerate(entries) if key and key in normalized(entry)]


def format_usage(target: str, used: int, limit: int) -> str:
    """`MEMORY.md 812/2,200 chars`."""
    return f"{FILE_NAMES[target]} {used:,}/{limit:,} chars"


@dataclass(frozen=True)
class EntryCheck:
    """The injection scan of one stored entry."""

    blocked: bool
    categories: tuple[str, ...] = ()

    @property
    def placeholder(self) -> str:
        reason = ", ".join(c.replace("_", " ") for c in self.categories) or "unsafe content"
        return f"[entry blocked: {reason}; the file keeps it for the user to review]"


def check_entry(entry: str) -> EntryCheck:
    """Scan an entry already on disk. The reason names categories only, never the
    matched text, so showing it cannot re-inject what was blocked."""
    result = safety.scan_text(entry, kind="memory")
    if not result.blocked:
        return EntryCheck(False)
    categories: list[str] = []
    for reason in result.reasons:
        category = reason.split(":", 1)[0].strip()
        if category not in categories:
            categories.append(category)
    return EntryCheck(True, tuple(categories))


def displayable(entries: Sequence[str]) -> list[str]:
    """Entries as they may be shown to a model: poisoned ones become placeholders."""
    out: list[str] = []
    for entry in entries:
        check = check_entry(entry)
        out.append(check.placeholder if check.blocked else entry)
    return out
