"""Splitting a long reply into messages a platform accepts.

`split_message(text, limit, measure)` cuts at the best boundary that fits: a
paragraph break, else a line break, else a space in the second half of the window,
else a hard cut (never between a character and the combining mark, variation
selector or zero-width joiner that belongs to it). A cut inside a fenced code block
closes the fence at the end of that part and reopens it, with the same info string,
at the start of the next, so every part renders on its own. With more than one
part each ends with an ``(i/N)`` marker on its own line; the marker counts towards
the limit. Lengths are measured with `measure`, in the platform's own units
(Telegram counts UTF-16 code units).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

Measure = Callable[[str], int]

_FENCE_RE = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")
_JOINERS = frozenset({"\u200d", "\ufe0e", "\ufe0f"})
MIN_BODY = 8  # a limit that leaves less room than this for text cannot be honoured


def utf16_length(text: str) -> int:
    """Length in UTF-16 code units (what Telegram's 4096 limit counts)."""
    return len(text.encode("utf-16-le")) // 2


def split_message(text: str, limit: int, measure: Measure = len) -> list[str]:
    """The parts to send, each at most `limit` by `measure`; [] for blank text."""
    text = text.strip("\n")
    if not text.strip():
        return []
    if measure(text) <= limit:
        return [text]
    digits = 1
    while True:
        widest = "9" * digits
        budget = limit - measure(_marker(widest, widest))
        if budget < MIN_BODY:
            raise ValueError(f"limit {limit} is too small to split a message into")
        parts = _split_body(text, budget, measure)
        if len(str(len(parts))) <= digits:
            break
        digits += 1
    total = len(parts)
    return [part + _marker(str(i), str(total)) for i, part in enumerate(parts, 1)]


def _marker(index: str, total: str) -> str:
    return f"\n({index}/{total})"


# ---- fences ------------------------------------------------------------------------------


def _open_fence(text: str) -> str | None:
    """The opening fence line (e.g. ```` ```python ````) if `text` ends inside a fence."""
    opener: str | None = None
    run = ""
    for line in text.split("\n"):
        match = _FENCE_RE.match(line)
        if match is None:
            continue
        fence, info = match.group(2), match.group(3)
        if opener is None:
            if fence[0] == "`" and "`" in info:
                continue  # not a fence: a backtick fence's info string has no backticks
            opener, run = line.strip(), fence
        elif fence[0] == run[0] and len(fence) >= len(run) and not info.strip():
            opener, run = None, ""
    return opener


def _closer(opener: str) -> str:
    match = _FENCE_RE.match(opener)
    assert match is not None
    return match.group(2)


def _longest_fence(text: str) -> str:
    runs = [m.group(2) for line in text.split("\n") if (m := _FENCE_RE.match(line))]
    return max(runs, key=len, default="")


# ---- the body ----------------------------------------------------------------------------


def _split_body(text: str, budget: int, measure: Measure) -> list[str]:
    longest = _longest_fence(text)
    reserve = measure("\n" + longest) if longest else 0
    parts: list[str] = []
    rest = text
    reopen = ""
    while rest:
        candidate = reopen + rest
        if measure(candidate) <= budget:
            parts.append(candidate.rstrip())
            break
        window = _fitting_prefix(candidate, budget - reserve, measure)
        cut = _choose_cut(candidate, window, floor=len(reopen))
        head, rest = candidate[:cut].rstrip(), candidate[cut:].lstrip("\n")
        fence = _open_fence(head)
        reopen = ""
        if fence is not None:
            closer = _closer(fence)
            head = head + "\n" + closer
            first, _, after = rest.partition("\n")
            if _closes(first, closer):  # the block ended right here: nothing to reopen
                rest = after.lstrip("\n")
            else:
                reopen = fence + "\n"
        parts.append(head)
    return parts


def _closes(line: str, closer: str) -> bool:
    match = _FENCE_RE.match(line)
    return (
        match is not None
        and match.group(2)[0] == closer[0]
        and len(match.group(2)) >= len(closer)
        and not match.group(3).strip()
    )


def _fitting_prefix(text: str, budget: int, measure: Measure) -> int:
    """The largest n with measure(text[:n]) <= budget (measure grows with n). The
    search starts near `budget`, so a long text is not measured whole again and again."""
    if budget <= 0:
        return 0
    low, high = 0, min(len(text), budget)
    while high < len(text) and measure(text[:high]) <= budget:
        low, high = high, min(len(text), high * 2)
    if high == len(text) and measure(text) <= budget:
        return high
    while low < high:
        mid = (low + high + 1) // 2
        if measure(text[:mid]) <= budget:
            low = mid
        else:
            high = mid - 1
    return low


def _choose_cut(text: str, window: int, *, floor: int) -> int:
    """Where to cut `text` within its first `window` characters. `floor` is the
    reopened fence line at the start, which a cut must get past to make progress."""
    window = max(window, floor + 1)
    head = text[:window]
    paragraph = _last_paragraph_break(head, floor)
    if paragraph is not None:
        return paragraph
    line = head.rfind("\n")
    if line > floor:
        return _skip_fence_opener(text, line, floor)
    space = head.rfind(" ")
    if space > max(floor, window // 2):
        return space + 1
    return _grapheme_safe(text, window, floor)


def _last_paragraph_break(head: str, floor: int) -> int | None:
    index = head.rfind("\n\n")
    while index > floor:
        if _open_fence(head[:index]) is None:  # a blank line outside code: a paragraph end
            return index
        index = head.rfind("\n\n", 0, index)
    return None


def _skip_fence_opener(text: str, cut: int, floor: int) -> int:
    """Don't end a part with a fence that opens and holds nothing yet."""
    start = text.rfind("\n", 0, cut) + 1
    last_line = text[start:cut]
    if start > floor and _FENCE_RE.match(last_line) and _open_fence(text[:cut]) is not None:
        return start - 1 if start - 1 > floor else cut
    return cut


def _grapheme_safe(text: str, cut: int, floor: int) -> int:
    """Move a hard cut back so a mark or joiner stays with the character it modifies."""
    original = cut
    while (
        cut > floor + 1
        and cut < len(text)
        and (unicodedata.combining(text[cut]) or text[cut] in _JOINERS or text[cut - 1] in _JOINERS)
    ):
        cut -= 1
    return cut if cut > floor else original


__all__ = ["Measure", "split_message", "utf16_length"]
