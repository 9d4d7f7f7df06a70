"""The REPL as a person sees it: `herald` in a pseudo-terminal, its bytes rendered by the
pyte terminal emulator, assertions on the rendered screen (not on the raw byte stream,
which contains text that a redraw later erased)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pexpect
import pyte

ROWS, COLS = 40, 100


class Screen:
    def __init__(self, cwd: Path, *args: str, env: dict[str, str] | None = None, cols: int = COLS):
        self.screen = pyte.Screen(cols, ROWS)
        self.stream = pyte.ByteStream(self.screen)
        self.child = pexpect.spawn(
            sys.executable,
            ["-m", "herald", *args],
            cwd=str(cwd),
            env={**os.environ, "TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1", **(env or {})},
            timeout=20,
            dimensions=(ROWS, cols),
        )

    def pump(self, seconds: float = 0.05) -> None:
        deadline = time.monotonic() + seconds
        while True:
            try:
                data = self.child.read_nonblocking(65536, timeout=0.05)
            except pexpect.TIMEOUT:
                data = b""
            except pexpect.EOF:
                return
            if data:
                self.stream.feed(data)
            if time.monotonic() >= deadline and not data:
                return

    @property
    def lines(self) -> list[str]:
        return [line.rstrip() for line in self.screen.display]

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    def wait_for(self, needle: str, timeout: float = 20) -> None:
        """Until ``needle`` is on the rendered screen (it may span lines)."""
        deadline = time.monotonic() + timeout
        while needle not in self.text:
            if time.monotonic() > deadline or not self.child.isalive():
                self.pump(0.2)
                if needle in self.text:
                    return
                raise AssertionError(f"{needle!r} never appeared; the screen:\n{self.text}")
            self.pump()

    def settle(self, seconds: float = 0.5) -> None:
        """Let the prompt finish redrawing (a redraw is what used to erase replies)."""
        self.pump(seconds)

    def send(self, line: str) -> None:
        self.child.send(line.encode() + b"\r")

    def close(self) -> None:
        if self.child.isalive():
            self.child.terminate(force=True)
