"""The execution-environment contract: where commands run and files live.

Tools never touch the machine directly: `terminal` runs commands and the file
tools read and write through the session's `Environment`, so switching the
backend (local processes, a host over ssh) needs no tool change.
"""

from __future__ import annotations

import errno
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from herald.environments.sandbox_spec import SandboxSpec


class EnvironmentConnectionError(RuntimeError):
    """The environment itself is unreachable (ssh down, host gone): an infrastructure
    failure, reported to the model as distinct from a command's own failure."""


class SandboxUnavailableError(EnvironmentConnectionError):
    """A session configured for a sandbox cannot start it (bubblewrap missing, user
    namespaces disabled, no Docker daemon). Nothing runs: never on the host instead."""


class NotRegularFileError(OSError):
    """A path that is not a regular file: a named pipe, a socket or a device. Reading
    one waits for whoever writes to it (a pipe with no writer, forever) or never ends,
    so the file operations refuse it (anyone can make one: `mkfifo`, a tar archive)."""

    def __init__(self, path: str) -> None:
        super().__init__(errno.EINVAL, "Not a regular file (a pipe, socket or device)", path)


@dataclass(frozen=True)
class ExecResult:
    output: str  # stdout and stderr interleaved, as a terminal shows them
    exit_code: int | None  # None when the command was killed (timeout, interrupt)
    duration_s: float
    timed_out: bool = False
    interrupted: bool = False


@dataclass(frozen=True)
class FileInfo:
    path: str  # absolute, as the environment sees it
    size: int
    is_dir: bool
    mtime: float
    is_regular: bool = True  # False for a named pipe, socket or device (and a directory)


ActivityCallback = Callable[[str], None]


class BackgroundProcess(ABC):
    """A command started with `Environment.spawn`, running on after the call returns."""

    id: str
    command: str
    started_at: float

    @abstractmethod
    def poll(self) -> int | None:
        """The exit code, or None while it runs."""

    @abstractmethod
    def read_output(self, since: int = 0) -> tuple[str, int]:
        """Output from character offset `since` on, and the new offset."""

    @abstractmethod
    def write_stdin(self, data: str) -> None: ...

    @abstractmethod
    def wait(self, timeout: float, cancel: threading.Event | None = None) -> int | None: ...

    @abstractmethod
    def kill(self) -> None:
        """Kill the whole process group."""


class Environment(ABC):
    name: str

    @abstractmethod
    def execute(
        self,
        command: str,
        *,
        cwd: str | None,
        timeout: float,
        env: Mapping[str, str] | None = None,
        cancel: threading.Event | None = None,
        on_activity: ActivityCallback | None = None,
    ) -> ExecResult:
        """Run `command` through a shell. `env` adds variables on top of a clean,
        secret-free environment. Timeout and cancel kill the whole process group."""

    @abstractmethod
    def spawn(
        self, command: str, *, cwd: str | None, env: Mapping[str, str] | None = None
    ) -> BackgroundProcess: ...

    @abstractmethod
    def read_bytes(self, path: str, *, max_bytes: int | None = None) -> bytes: ...

    @abstractmethod
    def write_bytes(self, path: str, data: bytes) -> None:
        """Write atomically, creating parent directories."""

    @abstractmethod
    def stat(self, path: str) -> FileInfo | None:
        """None when the path does not exist."""

    @abstractmethod
    def resolve(self, path: str, cwd: str | None = None) -> str:
        """An absolute, normalised path (``~`` expanded) as the environment sees it."""

    @property
    @abstractmethod
    def cwd(self) -> str:
        """The default working directory."""

    @property
    def sandbox_spec(self) -> SandboxSpec | None:
        """What the sandbox exposes, for a backend that is one (bwrap, docker)."""
        return None

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release connections and kill background processes."""
