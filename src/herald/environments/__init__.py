"""Execution environments (L0): where commands run and files live (local processes, ssh)."""

from herald.environments.base import (
    ActivityCallback,
    BackgroundProcess,
    Environment,
    EnvironmentConnectionError,
    ExecResult,
    FileInfo,
)

__all__ = [
    "ActivityCallback",
    "BackgroundProcess",
    "Environment",
    "EnvironmentConnectionError",
    "ExecResult",
    "FileInfo",
]
