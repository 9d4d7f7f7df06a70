"""Config section for where and how commands run (`terminal.*`, `terminal.ssh.*`,
`terminal.sandbox.*` for the bwrap and docker backends, `terminal.docker.*`)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from herald.config.strict import StrictModel

# The terminal tool registers itself with a result cap above this, so its own
# head/tail truncation (and the status line after it) always happens first.
MAX_OUTPUT_CHARS_LIMIT = 100_000


class SshConfig(StrictModel):
    """The host `terminal.backend: ssh` runs commands on (through the system ssh client)."""

    host: str | None = Field(None, description="host name or address (required for ssh)")
    user: str | None = Field(None, description="login user; unset = ssh's default")
    port: int = Field(22, ge=1, le=65535)
    identity_file: str | None = Field(None, description="private key file (~ expanded)")
    options: list[str] = Field(
        default_factory=list,
        description="extra ssh -o options such as 'ServerAliveInterval=30'",
    )
    connect_timeout_seconds: float = Field(
        10.0, gt=0, description="seconds to wait for the connection before giving up"
    )
    control_persist_seconds: int = Field(
        300, ge=0, description="how long the shared connection stays open when idle"
    )


MOUNT_MODES = ("ro", "rw")


class SandboxConfig(StrictModel):
    """What a sandboxed session (`terminal.backend: bwrap` or `docker`) may see and use."""

    mounts: list[str] = Field(
        default_factory=list,
        description="extra host paths visible in the sandbox, each 'PATH:ro' or 'PATH:rw' "
        "(same path inside); the working directory is always mounted read-write",
    )
    network: bool = Field(False, description="allow network access from inside the sandbox")
    memory_mb: int = Field(
        8192, ge=0, description="address-space limit per process in MiB (0 = no limit)"
    )
    total_memory_mb: int = Field(
        4096,
        ge=0,
        description="memory (RAM) the whole sandbox may use in MiB, enforced by a cgroup where "
        "one is writable (docker: the container's limit); 0 = no total limit",
    )
    cpu_seconds: int = Field(0, ge=0, description="CPU seconds per process (0 = no limit)")
    max_processes: int = Field(
        512, ge=0, description="processes the sandbox may hold at once (0 = no limit)"
    )

    @field_validator("mounts")
    @classmethod
    def _check_mounts(cls, mounts: list[str]) -> list[str]:
        for entry in mounts:
            path, sep, mode = entry.rpartition(":")
            if not sep or mode not in MOUNT_MODES or not path.strip():
                raise ValueError(
                    f"mount {entry!r} must be PATH:ro or PATH:rw (for example ~/data:ro)"
                )
        return mounts


class DockerConfig(StrictModel):
    """The container `terminal.backend: docker` runs commands in (one per session)."""

    image: str = Field("python:3.11-slim", description="image the session's container runs")
    idle_timeout_seconds: int = Field(
        1800, ge=0, description="remove the container after this long unused (0 = never)"
    )


class TerminalConfig(StrictModel):
    backend: Literal["local", "ssh", "bwrap", "docker"] = Field(
        "local",
        description="local: commands run on this machine; ssh: on terminal.ssh.host; "
        "bwrap: in a bubblewrap sandbox on this machine; docker: in a container per session",
    )
    cwd: str | None = Field(
        None,
        description="working directory for commands, as the backend sees it; "
        "unset = where Herald started (local) or the remote home (ssh)",
    )
    timeout_seconds: int = Field(
        180, ge=1, description="default seconds a command may run before it is killed"
    )
    max_timeout_seconds: int = Field(
        3600, ge=1, description="the largest timeout the model may ask for"
    )
    max_output_chars: int = Field(
        50_000,
        ge=1_000,
        le=MAX_OUTPUT_CHARS_LIMIT,
        description="output shown to the model; longer output keeps 40 % head and 60 % tail "
        "and the full text is saved under cache/tool-results/",
    )
    activity_interval_seconds: float = Field(
        10.0, gt=0, description="how often a long command reports progress"
    )
    ssh: SshConfig = Field(default_factory=SshConfig)
    sandbox: SandboxConfig = Field(default_factory=SandboxConfig)
    docker: DockerConfig = Field(default_factory=DockerConfig)
