"""Bounded output buffers shared by the backends.

A command may print gigabytes; Herald keeps a bounded amount while still
draining the pipe (a full pipe would block the child forever).
"""

from __future__ import annotations

import codecs
import threading
import time
from collections.abc import Callable

DEFAULT_MAX_OUTPUT_BYTES = 8 * 1024 * 1024
DEFAULT_RING_CHARS = 1_000_000
_LAST_LINE_CHARS = 200


def _decode(data: bytes | bytearray) -> str:
    return bytes(data).decode("utf-8", errors="replace")


def last_line(text: str) -> str:
    """The newest non-empty line (progress bars redraw with \\r, so split on both)."""
    for line in reversed(text.replace("\r", "\n").split("\n")):
        if line.strip():
            return line.strip()[:_LAST_LINE_CHARS]
    return ""


class OutputCollector:
    """A foreground command's output: everything up to `max_bytes`, beyond that
    the first 40 % and the latest 60 % (the same shape the terminal tool shows)."""

    def __init__(self, max_bytes: int = DEFAULT_MAX_OUTPUT_BYTES) -> None:
        self._head_cap = max_bytes * 2 // 5
        self._tail_cap = max_bytes - self._head_cap
        self._head = bytearray()
        self._tail = bytearray()
        self.total_bytes = 0

    def feed(self, data: bytes) -> None:
        self.total_bytes += len(data)
        room = self._head_cap - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        if data:
            self._tail += data
            # Trim only when twice over the cap so trimming stays amortised O(1)/byte.
            if len(self._tail) > 2 * self._tail_cap:
                del self._tail[: len(self._tail) - self._tail_cap]

    @property
    def dropped_bytes(self) -> int:
        kept = len(self._head) + min(len(self._tail), self._tail_cap)
        return self.total_bytes - kept

    def last_line(self) -> str:
        return last_line(_decode((self._tail or self._head)[-4096:]))

    def text(self) -> str:
        tail = self._tail[-self._tail_cap :] if self._tail_cap else b""
        dropped = self.dropped_bytes
        if not dropped:
            return _decode(self._head + tail)
        marker = f"\n[… {dropped:,} bytes of output were not kept …]\n"
        return _decode(self._head) + marker + _decode(tail)


class OutputRing:
    """A background process's output, thread-safe: the newest `max_chars`
    characters, addressed by offsets counted over everything ever written."""

    def __init__(self, max_chars: int = DEFAULT_RING_CHARS) -> None:
        self._max = max_chars
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._chunks: list[str] = []
        self._kept = 0
        self._start = 0  # offset of the first kept character
        self._lock = threading.Lock()

    def feed(self, data: bytes, *, final: bool = False) -> None:
        text = self._decoder.decode(data, final=final)
        if not text:
            return
        with self._lock:
            self._chunks.append(text)
            self._kept += len(text)
            while self._kept - len(self._chunks[0]) >= self._max and len(self._chunks) > 1:
                first = self._chunks.pop(0)
                self._kept -= len(first)
                self._start += len(first)
            if self._kept > 2 * self._max:  # one huge chunk
                joined = "".join(self._chunks)
                cut = len(joined) - self._max
                self._chunks = [joined[cut:]]
                self._kept -= cut
                self._start += cut

    @property
    def total(self) -> int:
        with self._lock:
            return self._start + self._kept

    def read(self, since: int = 0) -> tuple[str, int]:
        """Text from offset `since` (a notice first if part of it was dropped) and the end offset."""
        with self._lock:
            end = self._start + self._kept
            since = max(0, min(since, end))
            text = "".join(self._chunks)
            if since >= self._start:
                return text[since - self._start :], end
            lost = self._start - since
            return f"[… {lost:,} earlier characters were not kept …]\n" + text, end

    def last_line(self) -> str:
        with self._lock:
            tail = self._chunks[-1] if self._chunks else ""
        return last_line(tail[-4096:])


class ActivityThrottle:
    """Calls `callback` at most once per `interval` seconds, the first time only
    after the command has run for `interval` (short commands stay silent)."""

    def __init__(
        self, callback: Callable[[str], None] | None, interval: float, started: float
    ) -> None:
        self._callback = callback
        self._interval = interval
        self._started = started
        self._next = started + interval

    def tick(self, latest_line: Callable[[], str]) -> None:
        if self._callback is None:
            return
        now = time.monotonic()
        if now < self._next:
            return
        self._next = now + self._interval
        line = latest_line()
        message = f"running for {now - self._started:.0f} s"
        if line:
            message += f": {line}"
        try:
            self._callback(message)
        except Exception:  # a status display must never break a command
            pass
