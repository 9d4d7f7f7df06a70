"""Text clean-up applied to a command before any rule looks at it.

The goal is to make every spelling that the shell would run the same way look
the same to the rules: terminal escape sequences, NUL bytes and other control
characters are dropped, Unicode compatibility forms (fullwidth letters,
ligatures) fold to their ASCII shape, invisible format characters vanish and
backslash-newline continuations are joined. Shell-level tricks (quotes inside
words, backslash-escaped letters, ``$IFS``, ``~``) are undone by the
tokenizer in :mod:`herald.safety.shell_lex`, which knows about quoting.
"""

from __future__ import annotations

import re
import unicodedata

# CSI (ESC [ ... final), OSC (ESC ] ... BEL or ST), other two-byte escapes, and
# the single-byte C1 CSI (0x9b) form.
_ANSI_RE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]{0,4096}(?:\x07|\x1b\\)?"
    r"|\x1b[@-Z\\-_]"
    r"|\x9b[0-?]*[ -/]*[@-~]"
)
# C0/C1 controls except tab and newline; \r is handled separately.
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
# Zero-width, bidirectional and other invisible format characters: the shell
# treats them as part of a word, but a human reading the command cannot see
# them, so they are removed (which can only make a rule match more often).
_INVISIBLE_RE = re.compile(
    "[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]"
)
_CONTINUATION_RE = re.compile(r"\\\r?\n")


def strip_ansi(text: str) -> str:
    """Remove terminal escape sequences (colours, cursor moves, titles)."""
    if "\x1b" not in text and "\x9b" not in text:
        return text
    return _ANSI_RE.sub("", text)


def normalize_command(command: str) -> str:
    """The command as the rules see it (see the module docstring)."""
    text = strip_ansi(command)
    text = text.replace("\r\n", "\n")
    text = _CONTROL_RE.sub("", text).replace("\r", "")
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
        text = _INVISIBLE_RE.sub("", text)
    return _CONTINUATION_RE.sub("", text)
