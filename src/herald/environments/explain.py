"""`explain_terminal`: what the session's backend isolates, in words a user can
check before trusting it (`herald sandbox explain`)."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass

from herald.config import ConfigError, HeraldConfig
from herald.config.home import base_home
from herald.environments.base import EnvironmentConnectionError
from herald.environments.sandbox_spec import (
    ETC_SECRETS,
    HOME_SECRETS,
    SYSTEM_DIRS,
    SandboxSpec,
)

RELAXED_TEXT = (
    "relaxed (approvals.sandboxed): commands that only endanger the sandbox run without "
    "a prompt: deleting files in the working directory or /tmp, recursive chmod there, "
    "git reset/clean, and (with no network and no rw mount outside the working directory) "
    "inline code such as python -c; hard-line commands are still refused; anything "
    "reaching outside (rw mounts outside the working directory, network commands when "
    "network is on, ssh, docker, git push) still asks"
)
STRICT_TEXT = "strict (approvals.sandboxed): the same prompts as on the host"


@dataclass(frozen=True)
class Explanation:
    rows: list[tuple[str, str]]
    ok: bool  # False when the configured sandbox cannot start here


def _limits(spec: SandboxSpec, *, process_cgroup: bool, docker: bool = False) -> str:
    scope = "for the whole container" if docker else "address space per process"
    memory = f"{spec.memory_mb} MiB {scope}" if spec.memory_mb else "no memory limit"
    cpu = f"{spec.cpu_seconds} CPU s per process" if spec.cpu_seconds else "no CPU limit"
    if not spec.max_processes:
        procs = "no process limit"
    else:
        how = "a pids cgroup, since Herald runs as root" if process_cgroup else "RLIMIT_NPROC"
        how = "the container's pids limit" if docker else how
        procs = f"{spec.max_processes} processes ({how})"
    return f"{memory}; {cpu}; {procs}"


def _mount_rows(spec: SandboxSpec) -> list[tuple[str, str]]:
    system = " ".join(d for d in SYSTEM_DIRS if os.path.lexists(d))
    mounts = ", ".join(
        f"{m.path} ({'read-write' if m.mode == 'rw' else 'read-only'})" for m in spec.mounts
    )
    return [
        ("working dir", f"{spec.workdir} (read-write)"),
        ("mounts", mounts or "none (add PATH:ro or PATH:rw to terminal.sandbox.mounts)"),
        ("system", f"{system} read-only; hidden there: {', '.join(ETC_SECRETS[:4])} …"),
    ]


def _hidden_row(home: str) -> tuple[str, str]:
    secrets = ", ".join(f"~/{name}" for name in HOME_SECRETS[:5])
    return (
        "hidden",
        f"your home directory ({home}), other users' files, Herald's home ({base_home()}); "
        f"{secrets} … stay hidden even inside a mounted directory",
    )


def explain_terminal(config: HeraldConfig, cwd: str, *, check: bool = True) -> Explanation:
    """Rows of (label, text) describing where commands run for this config and
    directory; with `check`, the sandbox is started once to prove it works."""
    terminal = config.terminal
    backend = terminal.backend
    approvals = config.approvals
    if backend == "local":
        return Explanation(
            [
                ("backend", "local: commands run on this machine as you, with no sandbox"),
                ("working dir", terminal.cwd or cwd),
                ("isolation", "none: every file you can read or write, the network, processes"),
                ("approvals", f"mode {approvals.mode}: dangerous commands follow the host rules"),
                ("sandbox", "set terminal.backend bwrap (or docker) to isolate commands"),
            ],
            True,
        )
    if backend == "ssh":
        host = terminal.ssh.host or "(terminal.ssh.host is not set)"
        return Explanation(
            [
                ("backend", f"ssh: commands run on {host} as the ssh user, with no sandbox"),
                ("approvals", f"mode {approvals.mode}: dangerous commands follow the host rules"),
            ],
            bool(terminal.ssh.host),
        )
    from herald.environments.factory import create_environment

    home = os.path.expanduser("~")
    try:
        env = create_environment(config, secrets=None, cwd=cwd if not terminal.cwd else None)
    except ConfigError as exc:
        return Explanation([("backend", backend), ("problem", str(exc))], False)
    spec = env.sandbox_spec
    assert spec is not None
    status, ok = "not checked (--no-check)", True
    if check:
        try:
            env.execute("true", cwd=None, timeout=60)
            status = "the sandbox started and ran a command here"
        except (EnvironmentConnectionError, OSError, subprocess.SubprocessError) as exc:
            status, ok = f"cannot start: {exc}", False
        finally:
            env.close()
    if backend == "bwrap":
        head = "bwrap: each session in its own bubblewrap sandbox on this machine"
        private = "/tmp and the home directory are private to the session, deleted at its end"
        process_cgroup = bool(getattr(env, "limits_processes_by_cgroup", False))
    else:
        docker = terminal.docker
        idle = f"{docker.idle_timeout_seconds} s" if docker.idle_timeout_seconds else "never"
        head = (
            f"docker: one container per session from {docker.image}, removed at session end "
            f"or after {idle} idle"
        )
        private = "everything outside the mounts is the container's own"
        process_cgroup = False
    rows = [("backend", head), *_mount_rows(spec)]
    if backend == "bwrap":
        rows.append(_hidden_row(home))
    rows += [
        ("private", private),
        (
            "network",
            "on (terminal.sandbox.network: true)"
            if spec.network
            else "off: no network at all, not even services on this machine's 127.0.0.1",
        ),
        ("limits", _limits(spec, process_cgroup=process_cgroup, docker=backend == "docker")),
        ("processes", "a separate PID namespace; everything inside dies with the session"),
        ("approvals", RELAXED_TEXT if approvals.sandboxed == "relaxed" else STRICT_TEXT),
        ("status", status),
    ]
    return Explanation(rows, ok)
