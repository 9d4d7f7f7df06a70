"""Config section for where and how commands run (`terminal.*`, `terminal.ssh.*`)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

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


class TerminalConfig(StrictModel):
    backend: Literal["local", "ssh"] = Field(
        "local", description="local: commands run on this machine; ssh: on terminal.ssh.host"
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
