"""A background process behind a local pipe (a local command, or an ssh client
running a remote one): a reader thread fills a bounded ring buffer."""

from __future__ import annotations

import os
import secrets as _random
import select
import subprocess
import threading
import time
from collections.abc import Callable, Iterator

from herald.environments._output import OutputRing
from herald.environments._streaming import READ_SIZE, TICK_S, MarkerFilter, shell_exit_code
from herald.environments.base import BackgroundProcess

STDIN_WRITE_TIMEOUT_S = 5.0
_FINAL_READ_S = 0.5  # after exit, how long to wait for the last output to arrive
_MAX_DIAGNOSTICS = 16_384


def new_process_id() -> str:
    return "proc_" + _random.token_hex(4)


class PipedBackgroundProcess(BackgroundProcess):
    def __init__(
        self,
        proc: subprocess.Popen[bytes],
        command: str,
        *,
        kill: Callable[[], None],
        markers: MarkerFilter | None = None,
        ring_chars: int | None = None,
    ) -> None:
        self.id = new_process_id()
        self.command = command
        self.started_at = time.time()
        self.pid = proc.pid
        self._proc = proc
        self._kill = kill
        self._ring = OutputRing(ring_chars) if ring_chars else OutputRing()
        # A wrapper's control lines (see MarkerFilter) are stripped before the ring.
        self._markers = markers
        if markers is not None:
            markers.sink = self._ring.feed
        self._feed = markers.feed if markers is not None else self._ring.feed
        self._stdin_lock = threading.Lock()
        # A separate stderr carries the ssh client's own diagnostics; they are shown
        # only when the wrapper never started (the connection failed).
        self._diagnostics = bytearray()
        self._stderr_reader: threading.Thread | None = None
        if proc.stderr is not None:
            self._stderr_reader = threading.Thread(
                target=self._drain_stderr, name=f"{self.id}-stderr", daemon=True
            )
            self._stderr_reader.start()
        self._reader = threading.Thread(
            target=self._read_loop, name=f"{self.id}-reader", daemon=True
        )
        self._reader.start()

    # -- output -------------------------------------------------------------------

    def _read_loop(self) -> None:
        assert self._proc.stdout is not None
        for data in _chunks(self._proc.stdout.fileno()):
            self._feed(data)
        if self._markers is not None:
            self._markers.flush()
            if not self._markers.values and self._stderr_reader is not None:
                self._stderr_reader.join(_FINAL_READ_S)
                self._ring.feed(bytes(self._diagnostics))
        self._ring.feed(b"", final=True)
        try:
            self._proc.stdout.close()
        except OSError:
            pass

    def _drain_stderr(self) -> None:
        assert self._proc.stderr is not None
        for data in _chunks(self._proc.stderr.fileno()):
            room = _MAX_DIAGNOSTICS - len(self._diagnostics)
            if room > 0:
                self._diagnostics += data[:room]
        try:
            self._proc.stderr.close()
        except OSError:
            pass

    def read_output(self, since: int = 0) -> tuple[str, int]:
        return self._ring.read(since)

    @property
    def output_chars(self) -> int:
        return self._ring.total

    def last_line(self) -> str:
        return self._ring.last_line()

    # -- lifecycle ----------------------------------------------------------------

    def poll(self) -> int | None:
        code = self._proc.poll()
        return None if code is None else shell_exit_code(code)

    def wait(self, timeout: float, cancel: threading.Event | None = None) -> int | None:
        deadline = time.monotonic() + max(0.0, timeout)
        while True:
            code = self._proc.poll()
            if code is not None:
                self._reader.join(_FINAL_READ_S)
                return shell_exit_code(code)
            remaining = deadline - time.monotonic()
            if remaining <= 0 or (cancel is not None and cancel.is_set()):
                return None
            try:
                self._proc.wait(timeout=min(TICK_S, remaining))
            except subprocess.TimeoutExpired:
                pass

    def kill(self) -> None:
        if self._proc.poll() is None or self._reader.is_alive():
            self._kill()
        try:
            self._proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self._proc.kill()
        self._reader.join(_FINAL_READ_S)
        self._close_stdin()

    # -- input --------------------------------------------------------------------

    def write_stdin(self, data: str) -> None:
        """Write without blocking forever: a process that does not read its input
        fails the write after a few seconds instead of hanging the agent."""
        stdin = self._proc.stdin
        if stdin is None or stdin.closed:
            raise BrokenPipeError("the process's input is closed")
        if self._proc.poll() is not None:
            raise BrokenPipeError("the process has exited")
        payload = memoryview(data.encode("utf-8"))
        fd = stdin.fileno()
        deadline = time.monotonic() + STDIN_WRITE_TIMEOUT_S
        writable = select.poll()  # poll, not select: fine with descriptors above 1024
        writable.register(fd, select.POLLOUT)
        with self._stdin_lock:
            os.set_blocking(fd, False)
            while payload:
                try:
                    written = os.write(fd, payload)
                    payload = payload[written:]
                    continue
                except BlockingIOError:
                    pass
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError("the process is not reading its input")
                writable.poll(min(remaining, TICK_S) * 1000)

    def close_stdin(self) -> None:
        """Send end-of-file to the process."""
        self._close_stdin()

    def _close_stdin(self) -> None:
        with self._stdin_lock:
            if self._proc.stdin is not None and not self._proc.stdin.closed:
                try:
                    self._proc.stdin.close()
                except OSError:
                    pass


class ProcessTable:
    """The background processes one environment started, oldest first (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._processes: dict[str, PipedBackgroundProcess] = {}

    def add(self, process: PipedBackgroundProcess) -> PipedBackgroundProcess:
        with self._lock:
            self._processes[process.id] = process
        return process

    def all(self) -> list[BackgroundProcess]:
        with self._lock:
            return list(self._processes.values())

    def kill_all(self) -> None:
        for process in self.all():
            process.kill()


def _chunks(fd: int) -> Iterator[bytes]:
    """What a pipe delivers until it closes (a read error counts as closed)."""
    while True:
        try:
            data = os.read(fd, READ_SIZE)
        except OSError:
            return
        if not data:
            return
        yield data
