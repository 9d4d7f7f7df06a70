"""`explain_terminal`: what the session's backend isolates, in words a user can
check before trusting it (`herald sandbox explain`).

For a sandbox the paths are the ones the backend really mounts for this
working directory (the same functions build the bwrap and docker command
lines): what is hidden, what is read-only inside the writable mounts, and what
a command can write. Nothing is created to find out.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field

from herald.config import ConfigError, HeraldConfig
from herald.config.home import base_home
from herald.environments._cgroup import memory_cgroup_available
from herald.environments.base import EnvironmentConnectionError, SandboxUnavailableError
from herald.environments.protected import Protection
from herald.environments.sandbox_spec import (
    ETC_SECRETS,
    HOME_SECRETS,
    SYSTEM_DIRS,
    SandboxSpec,
    is_within,
)

RELAXED_TEXT = (
    "relaxed (approvals.sandboxed): a flagged command runs without a prompt only when all "
    "it can damage is the sandbox's own /tmp, home or processes (or project files a "
    "checkpoint taken for it covers); deleting or rewriting project files, git history "
    "(rm -rf .git, reset --hard, clean -fdx, reflog expire), the read-only files above, "
    "rw mounts outside the working directory, network commands when network is on, ssh, "
    "docker and git push still ask; hard-line commands are still refused"
)
STRICT_TEXT = "strict (approvals.sandboxed): the same prompts as on the host"


@dataclass(frozen=True)
class Explanation:
    rows: list[tuple[str, str]]
    ok: bool  # False when the configured sandbox cannot start here
    # For a sandbox, the host paths as mounted (tests check them from inside).
    hidden: tuple[str, ...] = ()
    read_only: tuple[str, ...] = ()
    writable: tuple[str, ...] = ()
    home_visible: bool = False
    notes: list[str] = field(default_factory=list)


def _limits(
    spec: SandboxSpec, *, process_cgroup: bool, memory_cgroup: bool, docker: bool = False
) -> str:
    if docker:
        total = spec.total_memory_mb or spec.memory_mb
        memory = f"{total} MiB for the whole container" if total else "no memory limit"
    else:
        memory = (
            f"{spec.memory_mb} MiB address space per process"
            if spec.memory_mb
            else "no per-process memory limit"
        )
        if spec.total_memory_mb and memory_cgroup:
            memory += f"; {spec.total_memory_mb} MiB in total (a memory cgroup)"
        elif spec.total_memory_mb:
            memory += (
                f"; the total of {spec.total_memory_mb} MiB is NOT enforced: no writable "
                "memory cgroup here (run Herald where cgroups are delegated to it)"
            )
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
        ("working dir", f"{spec.workdir} (read-write, except the read-only paths below)"),
        ("mounts", mounts or "none (add PATH:ro or PATH:rw to terminal.sandbox.mounts)"),
        ("system", f"{system} read-only; hidden there: {', '.join(ETC_SECRETS[:4])} …"),
    ]


def _protected_text(plan: list[Protection]) -> str:
    shown = []
    for item in plan:
        if item.action == "pin":
            continue
        made = "" if os.path.lexists(item.path) else " (not there yet: kept from being created)"
        shown.append(f"{item.path}{made}")
    return ", ".join(shown) or "nothing"


def _sandbox_view(env: object, spec: SandboxSpec, home: str, backend: str) -> Explanation:
    hidden = tuple(env.hidden())  # type: ignore[attr-defined]
    plan = env.protections(hidden)  # type: ignore[attr-defined]
    read_only = tuple(p.path for p in plan if p.action != "pin") + tuple(
        m.path for m in spec.mounts if m.mode == "ro"
    )
    private = ("/tmp", home) if backend == "bwrap" else ()
    writable = (spec.workdir, *spec.rw_paths_outside_workdir(), *private)
    visible_home = [m.path for m in spec.mounts if is_within(home, m.path)]
    if backend == "docker":
        home_text = f"your home directory ({home}) is not mounted; ~ is the container's own"
    elif visible_home:
        home_text = (
            f"your home directory ({home}) is visible READ-ONLY through the mount "
            f"{visible_home[0]}; the hidden paths below are masked"
        )
    else:
        home_text = (
            f"your home directory ({home}) is not mounted: ~ inside is the session's own "
            "empty directory, deleted at its end"
        )
    names = ", ".join(f"~/{name}" for name in HOME_SECRETS[:8])
    hidden_text = (
        f"Herald's home ({base_home()}) is never mounted; "
        + (f"masked: {', '.join(hidden)}; " if hidden else "")
        + f"and wherever a mount would show them: {names} … ({len(HOME_SECRETS)} names)"
    )
    rows = [
        ("home", home_text),
        ("hidden", hidden_text),
        ("read-only", _protected_text(plan) + " (the host runs these later)"),
        (
            "writable",
            ", ".join(f"{w} (private)" if w in private else w for w in writable)
            + " — everything else is read-only or absent",
        ),
    ]
    return Explanation(
        rows,
        True,
        hidden=hidden,
        read_only=read_only,
        writable=writable,
        home_visible=bool(visible_home),
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
        return Explanation([("backend", backend), ("problem", f"no sandbox here: {exc}")], False)
    spec = env.sandbox_spec
    assert spec is not None
    try:
        view = _sandbox_view(env, spec, home, backend)
    except SandboxUnavailableError as exc:
        env.close()
        return Explanation([("backend", backend), ("problem", str(exc))], False)
    status, ok = "not checked (--no-check)", True
    memory_cgroup = memory_cgroup_available()
    if check:
        try:
            env.execute("true", cwd=None, timeout=60)
            status = "the sandbox started and ran a command here"
            memory_cgroup = bool(getattr(env, "total_memory_by_cgroup", memory_cgroup))
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
    limits = _limits(
        spec, process_cgroup=process_cgroup, memory_cgroup=memory_cgroup, docker=backend == "docker"
    )
    rows = [("backend", head), *_mount_rows(spec), *view.rows]
    rows += [
        ("private", private),
        (
            "network",
            "on (terminal.sandbox.network: true)"
            if spec.network
            else "off: no network at all, not even services on this machine's 127.0.0.1",
        ),
        ("limits", limits),
        ("processes", "a separate PID namespace; everything inside dies with the session"),
        ("approvals", RELAXED_TEXT if approvals.sandboxed == "relaxed" else STRICT_TEXT),
        ("status", status),
    ]
    return Explanation(
        rows,
        ok,
        hidden=view.hidden,
        read_only=view.read_only,
        writable=view.writable,
        home_visible=view.home_visible,
    )
