"""Building blocks of the injection scanner's rules (:mod:`.scan_rules`):
a span type, a regular-expression finder and a windowed "verb … target"
finder that merges match lists, so every rule stays linear in the text."""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from itertools import islice

Span = tuple[int, int]
MAX_ANCHORS = 5000
_I = re.I


def regex(pattern: str, flags: int = _I) -> Callable[[str], Span | None]:
    compiled = re.compile(pattern, flags)

    def find(text: str) -> Span | None:
        m = compiled.search(text)
        return m.span() if m else None

    return find


def window_start(text: str, pos: int, window: int) -> int:
    """Start of the window of at most window chars before pos on its line."""
    low = max(0, pos - window)
    return text.rfind("\n", low, pos) + 1 or low


def before(
    anchor: str, before: str, window: int, after: str | None = None
) -> Callable[[str], Span | None]:
    """anchor preceded on its line, within window chars, by before (and,
    when given, followed on its line by after). Both lists of matches are
    found once and merged, so the cost stays linear in the text length."""
    anchor_re, before_re = re.compile(anchor, _I), re.compile(before, _I)
    after_re = re.compile(after, _I) if after else None

    def find(text: str) -> Span | None:
        anchors = [m.span() for m in islice(anchor_re.finditer(text), MAX_ANCHORS)]
        if not anchors:
            return None
        befores = [m.span() for m in before_re.finditer(text)]
        starts = [b for b, _ in befores]
        afters = [m.span() for m in after_re.finditer(text)] if after_re is not None else []
        after_starts = [a for a, _ in afters]
        for a_start, a_end in anchors:
            low = window_start(text, a_start, window)
            i = bisect.bisect_left(starts, low)
            if i >= len(befores) or befores[i][1] > a_start:
                continue
            end = a_end
            if after_re is not None:
                k = bisect.bisect_left(after_starts, a_end)
                if k >= len(afters) or afters[k][1] > a_end + 400:
                    continue
                if "\n" in text[a_end : afters[k][0]]:
                    continue
                end = afters[k][1]
            return befores[i][0], end
        return None

    return find
