"""Redacting text that leaves in pieces (SSE deltas).

Redacting each delta on its own would let a secret split across two deltas through.
`StreamRedactor` redacts the whole text received so far and releases only the part
that more text cannot change: up to the last whitespace, never past an open quote on
the current line (a JSON secret field's value may contain spaces) nor into a PEM block
that has not ended. Since masks only ever replace text after what was released, the
redacted prefix stays stable; if it ever does not, the rest is redacted piecewise.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from herald.safety import redact

_PEM_BEGIN = "-----BEGIN"
_PEM_END = "-----END"
_WHITESPACE_RE = re.compile(r"\s")


class StreamRedactor:
    def __init__(self, extra_secrets: Iterable[str] = ()) -> None:
        self._extra = tuple(extra_secrets)
        self._raw = ""
        self._sent = ""  # redacted text released so far
        self._raw_released = 0  # how much of _raw the released text covers
        self._piecewise = False  # the prefix diverged once: redact new text on its own

    @property
    def raw(self) -> str:
        return self._raw

    @property
    def sent(self) -> str:
        return self._sent

    def feed(self, piece: str) -> str:
        """Add a delta; return the redacted text that may be released now ("" if none)."""
        if not piece:
            return ""
        self._raw += piece
        return self._release(self._safe_end())

    def flush(self) -> str:
        """The rest of the text (call once the stream is complete)."""
        return self._release(len(self._raw))

    def _safe_end(self) -> int:
        raw = self._raw
        end = 0
        for match in _WHITESPACE_RE.finditer(raw, max(0, self._raw_released - 1)):
            end = match.end()
        if end <= self._raw_released:
            return self._raw_released
        line_start = raw.rfind("\n", 0, end) + 1
        if raw.count('"', line_start, end) % 2:  # inside a quoted value
            end = raw.rfind('"', line_start, end)
        begin = raw.rfind(_PEM_BEGIN, 0, end)
        if begin != -1 and raw.find(_PEM_END, begin) == -1:  # a key block still open
            end = min(end, begin)
        return max(end, self._raw_released)

    def _release(self, end: int) -> str:
        if end <= self._raw_released:
            return ""
        if not self._piecewise:
            redacted = redact(self._raw[:end], extra_secrets=self._extra)
            if redacted.startswith(self._sent):
                out = redacted[len(self._sent) :]
                self._sent, self._raw_released = redacted, end
                return out
            self._piecewise = True
        out = redact(self._raw[self._raw_released : end], extra_secrets=self._extra)
        self._sent += out
        self._raw_released = end
        return out
