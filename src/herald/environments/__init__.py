"""Execution environments (L0): where commands run and files live (local processes,
ssh, a bubblewrap sandbox, a Docker container).

`create_environment(config, secrets=…)` picks the backend from
``terminal.backend``: `LocalEnvironment` runs each command in its own process
group on this machine with a secret-free environment; `SshEnvironment` runs
it on ``terminal.ssh.host`` through the system ssh client over one shared
connection; `BwrapEnvironment` runs it in a per-session bubblewrap sandbox
and `DockerEnvironment` in a per-session container, both showing only the
working directory and the ``terminal.sandbox`` mounts (`SandboxSpec`) and
raising `SandboxUnavailableError` (never falling back to the host) when the
sandbox cannot start. Inside the writable working directory they keep the files
the host runs later read-only (git hooks and config, .envrc, editor task files:
`herald.environments.protected`), hide credentials inside any mount, refuse
the home (or a directory holding it) as working directory, and cap the
sandbox's total memory by cgroup where one is writable; `explain_terminal`
describes that isolation in words
(`herald sandbox explain`). All honour the same contract (`Environment`): timeouts and
interrupts kill the whole process tree, background processes can be read,
fed and killed, file reads and atomic writes go through the same backend, and
infrastructure failures raise `EnvironmentConnectionError`.
"""

from typing import TYPE_CHECKING

from herald.lazy import lazy_exports

if TYPE_CHECKING:  # for type checkers; at run time each name loads on first use
    from herald.environments.base import (
        ActivityCallback,
        BackgroundProcess,
        Environment,
        EnvironmentConnectionError,
        ExecResult,
        FileInfo,
        SandboxUnavailableError,
    )
    from herald.environments.bwrap import BwrapEnvironment
    from herald.environments.child_env import build_child_env, scrub_secrets
    from herald.environments.docker import DockerEnvironment
    from herald.environments.explain import Explanation, explain_terminal
    from herald.environments.factory import create_environment
    from herald.environments.local import LocalEnvironment
    from herald.environments.processes import pid_alive
    from herald.environments.sandbox_spec import Mount, SandboxSpec
    from herald.environments.ssh import SshEnvironment
    from herald.environments.tool_marker import TOOL_CALL_MARKER, started_by_tool_call

_EXPORTS: dict[str, tuple[str, ...]] = {
    "herald.environments.base": (
        "ActivityCallback",
        "BackgroundProcess",
        "Environment",
        "EnvironmentConnectionError",
        "ExecResult",
        "FileInfo",
        "SandboxUnavailableError",
    ),
    "herald.environments.bwrap": ("BwrapEnvironment",),
    "herald.environments.child_env": (
        "build_child_env",
        "scrub_secrets",
    ),
    "herald.environments.docker": ("DockerEnvironment",),
    "herald.environments.explain": (
        "Explanation",
        "explain_terminal",
    ),
    "herald.environments.factory": ("create_environment",),
    "herald.environments.local": ("LocalEnvironment",),
    "herald.environments.processes": ("pid_alive",),
    "herald.environments.sandbox_spec": (
        "Mount",
        "SandboxSpec",
    ),
    "herald.environments.ssh": ("SshEnvironment",),
    "herald.environments.tool_marker": (
        "TOOL_CALL_MARKER",
        "started_by_tool_call",
    ),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "TOOL_CALL_MARKER",
    "ActivityCallback",
    "BackgroundProcess",
    "BwrapEnvironment",
    "DockerEnvironment",
    "Environment",
    "EnvironmentConnectionError",
    "ExecResult",
    "Explanation",
    "FileInfo",
    "LocalEnvironment",
    "Mount",
    "SandboxSpec",
    "SandboxUnavailableError",
    "SshEnvironment",
    "build_child_env",
    "create_environment",
    "explain_terminal",
    "pid_alive",
    "scrub_secrets",
    "started_by_tool_call",
]
