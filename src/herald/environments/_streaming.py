"""Driving a child process to completion: draining its pipes, timeout,
interrupt and killing its whole process group (shared by local and ssh)."""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from typing import Literal

TICK_S = 0.05  # how often cancel is checked: bounds interrupt latency
KILL_GRACE_S = 0.1  # SIGTERM first, SIGKILL this long after: the group is gone within 200 ms
# A command may leave a detached child holding the pipe open; after the command
# itself exited, wait this long for the pipe to close, then stop reading.
EOF_GRACE_S = 0.25
READ_SIZE = 65536

Outcome = Literal["exited", "timeout", "interrupted"]


def shell_exit_code(returncode: int) -> int:
    """A death by signal N as a shell reports it (128+N), the same on every backend."""
    return 128 - returncode if returncode < 0 else returncode


def kill_process_group(pgid: int, proc: subprocess.Popen[bytes] | None = None) -> None:
    """SIGTERM the group, SIGKILL it after a short grace. Returns once the group is
    gone or SIGKILL was sent (SIGKILL cannot be caught, so the group dies at once)."""
    try:
        os.killpg(pgid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        return
    deadline = time.monotonic() + KILL_GRACE_S
    while time.monotonic() < deadline:
        if proc is not None:
            proc.poll()  # reap the leader, or the zombie keeps the group alive
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.01)
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class StreamPump:
    """Reads whichever of a process's pipes have data and hands it to a sink."""

    def __init__(self, sinks: dict[int, Callable[[bytes], None]]) -> None:
        self._selector = selectors.DefaultSelector()
        self._sinks = dict(sinks)
        for fd in self._sinks:
            self._selector.register(fd, selectors.EVENT_READ)

    @property
    def open(self) -> bool:
        return bool(self._sinks)

    def pump(self, timeout: float) -> None:
        if not self._sinks:
            time.sleep(max(0.0, timeout))
            return
        for key, _ in self._selector.select(max(0.0, timeout)):
            fd = int(key.fd)
            try:
                data = os.read(fd, READ_SIZE)
            except OSError:
                data = b""
            if data:
                self._sinks[fd](data)
            else:
                self._selector.unregister(fd)
                del self._sinks[fd]

    def close(self) -> None:
        self._selector.close()


def supervise(
    proc: subprocess.Popen[bytes],
    pump: StreamPump,
    *,
    timeout: float,
    cancel: threading.Event | None,
    kill: Callable[[], None],
    on_tick: Callable[[], None] | None = None,
) -> Outcome:
    """Drain `proc` until it exits, the timeout passes or `cancel` is set; in the
    last two cases call `kill` (which must end the whole process tree)."""
    deadline = time.monotonic() + timeout
    exited_at: float | None = None
    outcome: Outcome
    while True:
        if cancel is not None and cancel.is_set():
            outcome = "interrupted"
            break
        now = time.monotonic()
        if now >= deadline:
            outcome = "timeout"
            break
        if proc.poll() is not None:
            if not pump.open:
                return "exited"
            exited_at = exited_at if exited_at is not None else now
            if now - exited_at >= EOF_GRACE_S:
                return "exited"
        elif not pump.open:
            try:  # nothing left to read: just wait for the exit, still ticking
                proc.wait(timeout=min(TICK_S, deadline - now))
            except subprocess.TimeoutExpired:
                pass
        pump.pump(min(TICK_S, deadline - now))
        if on_tick is not None:
            on_tick()
    kill()
    # Collect what the dying group wrote last (usually arrives with the EOF).
    end = time.monotonic() + EOF_GRACE_S
    while pump.open and time.monotonic() < end:
        pump.pump(0.02)
    return outcome


class MarkerFilter:
    """Finds the one control line a wrapper script prints just before the command
    starts (the ssh backend's process-group id) and records its value.

    Whatever comes before it is login noise (a chatty ``.bashrc``) and is
    dropped; everything after it is the command's output. If the line never
    comes (the wrapper failed, or the noise is implausibly long), all of it is
    passed on so the failure stays visible."""

    MAX_PREAMBLE = 65536

    def __init__(self, prefix: bytes, sink: Callable[[bytes], None]) -> None:
        self._prefix = prefix
        self.sink = sink
        self._pending = bytearray()
        self._done = False
        self.values: list[str] = []
        self.seen = threading.Event()  # the marker arrived, or there will be none

    def feed(self, data: bytes) -> None:
        if self._done:
            self.sink(data)
            return
        self._pending += data
        at = self._pending.find(self._prefix)
        while at > 0 and self._pending[at - 1 : at] != b"\n":  # only at a line start
            at = self._pending.find(self._prefix, at + 1)
        end = self._pending.find(b"\n", at) if at >= 0 else -1
        if end >= 0:
            line = bytes(self._pending[at + len(self._prefix) : end])
            self.values.append(line.decode("ascii", "replace"))
            rest = bytes(self._pending[end + 1 :])
            self._pending.clear()
            self._done = True
            self.seen.set()
            if rest:
                self.sink(rest)
        elif len(self._pending) > self.MAX_PREAMBLE:
            self.flush()

    def flush(self) -> None:
        """No marker is coming (end of output): pass on what was held back."""
        if self._done:
            return
        self._done = True
        self.seen.set()
        if self._pending:
            self.sink(bytes(self._pending))
            self._pending.clear()
