"""A streamed reply on the REPL's screen, written whole lines at a time.

The prompt stays live under the reply (prompt_toolkit's patched stdout). Each time
the prompt redraws it clears the line the cursor is on, so a reply written as raw
deltas lost whatever had not yet ended in a newline: a one-line reply vanished and a
multi-line one lost its last line. Here text goes out only as complete screen lines:
at a newline, or once the pending text fills the terminal's width (broken at a
space, as the terminal would wrap it). The unfinished tail is written when the reply
ends, or before a status line is shown.

Because we know how many screen lines a reply attempt has written, a failed attempt
(a stream cut and retried) can be taken back off the screen: `discard()` moves the
cursor up over those lines and clears to the end of the screen.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable

from prompt_toolkit.utils import get_cwidth


def screen_rows(text: str, width: int) -> int:
    """How many terminal rows ``text`` (one logical line) occupies at ``width`` columns."""
    cells = get_cwidth(text)
    return max(1, -(-cells // max(1, width)))


class StreamView:
    def __init__(
        self,
        write: Callable[[str], None],
        width: Callable[[], int] | None = None,
    ):
        self._write = write
        self._width = width or (lambda: shutil.get_terminal_size((80, 24)).columns)
        self._tail = ""
        self.rows_written = 0  # screen rows of the current attempt, status lines included
        self.notes: list[str] = []  # status lines shown under this attempt's text
        self.wrote_text = False

    def feed(self, text: str) -> None:
        self.wrote_text = True
        self._tail += text
        while "\n" in self._tail:
            line, self._tail = self._tail.split("\n", 1)
            self._emit(line)
        width = self._width()
        while get_cwidth(self._tail) >= width:
            self._emit_wrapped(width)

    def _emit_wrapped(self, width: int) -> None:
        cut = 0
        cells = 0
        for i, ch in enumerate(self._tail):
            cells += get_cwidth(ch)
            if cells > width:
                break
            cut = i + 1
        space = self._tail.rfind(" ", 0, cut)
        if space > 0:  # break between words, dropping the space the line ends on
            line, self._tail = self._tail[:space], self._tail[space + 1 :]
        else:
            line, self._tail = self._tail[:cut], self._tail[cut:]
        self._emit(line)

    def _emit(self, line: str) -> None:
        self._write(line + "\n")
        self.rows_written += screen_rows(line, self._width())

    def end_line(self) -> None:
        """Write the unfinished tail (before a status line, or at the end of the reply)."""
        if self._tail:
            self._emit(self._tail)
            self._tail = ""

    def note_rows(self, text: str) -> None:
        """Another line (a status) was written under this attempt's text."""
        if self.rows_written:
            self.rows_written += sum(screen_rows(line, self._width()) for line in text.split("\n"))
            self.notes.append(text)

    def discard(self) -> list[str]:
        """Take this attempt's text back off the screen; the retry starts clean. Returns
        the status lines that were erased with it (the caller shows them again)."""
        notes = self.notes
        if self.rows_written:
            # CSI n F: cursor to the start of the line n rows up; CSI J: clear below.
            self._write(f"\x1b[{self.rows_written}F\x1b[J")
        self.reset()
        return notes

    def reset(self) -> None:
        self._tail = ""
        self.rows_written = 0
        self.notes = []
        self.wrote_text = False
