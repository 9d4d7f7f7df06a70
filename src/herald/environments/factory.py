"""`create_environment`: the session's environment, chosen by `terminal.backend`."""

from __future__ import annotations

import os

from herald.config import ConfigError, HeraldConfig, Secrets
from herald.environments.base import Environment
from herald.environments.sandbox_spec import SandboxSpec


def create_environment(
    config: HeraldConfig, *, secrets: Secrets | None, cwd: str | None = None
) -> Environment:
    """A new environment for one session (the caller closes it at session end).

    `cwd` is a directory as the backend sees it and wins over `terminal.cwd`;
    for ssh pass a remote path or None (the remote home); a sandbox (bwrap,
    docker) mounts a local one (default: where Herald started). A bad ssh section
    raises ConfigError naming the key to fix; nothing connects until first use.
    """
    terminal = config.terminal
    workdir = cwd or terminal.cwd
    if terminal.backend in ("bwrap", "docker"):
        # A sandbox on this machine: its working directory is a local one.
        spec = SandboxSpec.from_config(terminal.sandbox, workdir or os.getcwd())
        # Each backend is imported when chosen: a session runs on one of them.
        if terminal.backend == "bwrap":
            from herald.environments.bwrap import BwrapEnvironment

            return BwrapEnvironment(
                spec, secrets=secrets, activity_interval=terminal.activity_interval_seconds
            )
        from herald.environments.docker import DockerEnvironment

        return DockerEnvironment(
            spec,
            image=terminal.docker.image,
            idle_timeout=terminal.docker.idle_timeout_seconds,
            secrets=secrets,
            activity_interval=terminal.activity_interval_seconds,
        )
    if terminal.backend == "local":
        if workdir and not os.path.isdir(os.path.expanduser(workdir)):
            raise ConfigError(
                f"terminal.cwd: {workdir!r} is not a directory; set an existing one "
                "(herald config set terminal.cwd PATH) or unset it"
            )
        from herald.environments.local import LocalEnvironment

        return LocalEnvironment(
            workdir,
            secrets=secrets,
            activity_interval=terminal.activity_interval_seconds,
        )
    ssh = terminal.ssh
    if not ssh.host or not ssh.host.strip():
        raise ConfigError(
            "terminal.backend is 'ssh' but terminal.ssh.host is not set: "
            "set it (herald config set terminal.ssh.host HOST) or use terminal.backend local"
        )
    if ssh.host.startswith("-") or any(c.isspace() for c in ssh.host):
        raise ConfigError(f"terminal.ssh.host: {ssh.host!r} is not a host name or address")
    if ssh.user is not None and (ssh.user.startswith("-") or "@" in ssh.user or not ssh.user):
        raise ConfigError(f"terminal.ssh.user: {ssh.user!r} is not a user name")
    if ssh.identity_file and not os.path.isfile(os.path.expanduser(ssh.identity_file)):
        raise ConfigError(
            f"terminal.ssh.identity_file: {ssh.identity_file!r} does not exist; "
            "point it at the private key file or unset it to use ssh's defaults"
        )
    for option in ssh.options:
        if "=" not in option or option.startswith("-"):
            raise ConfigError(
                f"terminal.ssh.options: {option!r} is not an ssh option; "
                "write options as Key=Value (for example ServerAliveInterval=30)"
            )
    from herald.environments.ssh import SshEnvironment

    return SshEnvironment(
        ssh.host.strip(),
        user=ssh.user,
        port=ssh.port,
        identity_file=ssh.identity_file,
        options=ssh.options,
        cwd=workdir,
        connect_timeout=ssh.connect_timeout_seconds,
        control_persist=ssh.control_persist_seconds,
        activity_interval=terminal.activity_interval_seconds,
    )
