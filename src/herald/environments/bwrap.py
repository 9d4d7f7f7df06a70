"""`BwrapEnvironment`: every command and file operation of a session runs inside
a bubblewrap sandbox on this machine.

Each call starts ``bwrap`` with the session's view: the host's ``/usr``,
``/bin``, ``/lib*`` and ``/etc`` (minus its secrets) read-only, a private
``/tmp`` and a private home directory kept for the session, the working
directory read-write, the extra ``terminal.sandbox.mounts`` and nothing else
(the real home, ``~/.ssh``, Herald's home and other users' files are not
there). The root is read-only, so a write outside those paths fails loudly.
Namespaces: user, pid, ipc, uts, cgroup and (unless
``terminal.sandbox.network``) net; no capabilities, a new session (no
terminal injection), ``--die-with-parent``. Killing a command kills the bwrap
monitor and with it the sandbox's pid 1, which takes every process inside
along. Limits are rlimits set by the wrapper (address space, CPU seconds,
processes) plus, when Herald runs as root (the kernel never applies the
process rlimit to uid 0), a per-session pids cgroup.

File tools go through the sandbox too (small shell scripts, the same as the
ssh backend), so a symlink in the working directory cannot reach a hidden
file. When bwrap is missing or cannot create namespaces every call raises
`SandboxUnavailableError` saying why and how to fix it; nothing ever runs on
the host instead.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping
from pathlib import Path

from herald.config import ConfigError, Secrets
from herald.config.home import base_home
from herald.environments._background import PipedBackgroundProcess, ProcessTable
from herald.environments._cgroup import MemoryCgroup, PidsCgroup
from herald.environments._output import DEFAULT_MAX_OUTPUT_BYTES
from herald.environments._ssh_scripts import ScriptFileOps
from herald.environments._streaming import (
    kill_process_group,
)
from herald.environments.base import (
    ActivityCallback,
    BackgroundProcess,
    Environment,
    EnvironmentConnectionError,
    ExecResult,
    SandboxUnavailableError,
)
from herald.environments.child_env import build_child_env
from herald.environments.local import drive_to_completion
from herald.environments.protected import (
    Protection,
    UnprotectableError,
    make_placeholders,
    remove_placeholders,
    sandbox_protections,
)
from herald.environments.sandbox_spec import (
    SYSTEM_DIRS,
    SandboxSpec,
    hidden_paths,
    is_within,
    workdir_problem,
)

_FILE_OP_TIMEOUT_S = 120.0
_PROBE_TIMEOUT_S = 20.0
_NOT_ON_HOST = "Herald does not run anything outside the sandbox instead."
# Host variables that point at things the sandbox cannot (and must not) reach.
_HOST_ONLY_VARS = (
    "SSH_AUTH_SOCK",
    "GPG_AGENT_INFO",
    "DBUS_SESSION_BUS_ADDRESS",
    "XDG_RUNTIME_DIR",
    "HERALD_HOME",
    "DOCKER_HOST",
)

USERNS_HELP = (
    "User namespaces look disabled on this machine. Enable them with "
    "`sudo sysctl -w kernel.unprivileged_userns_clone=1` (Debian) or "
    "`sudo sysctl -w user.max_user_namespaces=15000`; on Ubuntu 23.10+ also "
    "`sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0` (or give bwrap an "
    "AppArmor profile). Inside a container, allow user namespaces (for Docker: "
    "--security-opt seccomp=unconfined or a profile permitting unshare)."
)


SESSION_DIR_PREFIX = "herald-sbx-"


def remove_dead_session_dirs() -> list[str]:
    """Delete the private /tmp and home of sessions whose Herald died without
    closing them (the owner's pid is in the directory name)."""
    removed = []
    for entry in Path(tempfile.gettempdir()).glob(f"{SESSION_DIR_PREFIX}*-*"):
        owner = entry.name[len(SESSION_DIR_PREFIX) :].split("-", 1)[0]
        if not owner.isdigit() or int(owner) == os.getpid() or Path(f"/proc/{owner}").exists():
            continue
        shutil.rmtree(entry, ignore_errors=True)
        removed.append(str(entry))
    return removed


def find_bwrap(name: str | None = None) -> str | None:
    """The bwrap executable: `name` (a path or a command on PATH), default ``bwrap``."""
    name = name or "bwrap"
    if os.sep in name:
        return name if os.path.isfile(name) and os.access(name, os.X_OK) else None
    return shutil.which(name)


def _bash() -> str:
    found = shutil.which("bash")
    return found if found and any(is_within(found, d) for d in SYSTEM_DIRS) else "/bin/bash"


class BwrapEnvironment(ScriptFileOps, Environment):
    name = "bwrap"
    sandboxed = True

    def __init__(
        self,
        spec: SandboxSpec,
        *,
        secrets: Secrets | None = None,
        herald_home: str | None = None,
        home: str | None = None,
        bwrap: str | None = None,
        base_env: Mapping[str, str] | None = None,
        activity_interval: float = 10.0,
        max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
    ) -> None:
        self.spec = spec
        self._cwd = spec.workdir
        self._home = os.path.normpath(os.path.expanduser(home or "~"))
        self._herald_home = os.path.normpath(
            os.path.abspath(os.path.expanduser(herald_home or str(base_home())))
        )
        if is_within(self._cwd, self._herald_home):
            raise ConfigError(
                f"the sandbox's working directory {self._cwd} is inside Herald's home "
                f"({self._herald_home}), which a sandbox never shows; work in another directory"
            )
        problem = workdir_problem(self._cwd, self._home)
        if problem:
            raise ConfigError(problem)
        self._bwrap_name = bwrap
        self._secrets = secrets
        self._base_env = dict(base_env) if base_env is not None else None
        self._activity_interval = activity_interval
        self._max_output_bytes = max_output_bytes
        self._ready_lock = threading.Lock()
        self._bwrap: str | None = None
        self._failure: SandboxUnavailableError | None = None
        self._session_dir: str | None = None
        self._cgroup: PidsCgroup | None = None
        self._memory_cgroup: MemoryCgroup | None = None
        self.total_memory_by_cgroup = False  # known once the sandbox started
        self._placeholders: list[Protection] = []
        self._background = ProcessTable()
        self._live: set[subprocess.Popen[bytes]] = set()
        self._lock = threading.Lock()
        self._closed = False

    # -- starting the sandbox -------------------------------------------------------

    @property
    def sandbox_spec(self) -> SandboxSpec:
        return self.spec

    @property
    def limits_processes_by_cgroup(self) -> bool:
        """Root ignores RLIMIT_NPROC, so a process limit needs a pids cgroup."""
        return self.spec.max_processes > 0 and os.geteuid() == 0

    def ensure_ready(self) -> None:
        """Check bwrap works here (once per session); raise SandboxUnavailableError
        with the reason and the fix otherwise (and on every later call)."""
        with self._ready_lock:
            if self._failure is not None:
                raise self._failure
            if self._bwrap is not None:
                return
            if self._closed:
                raise SandboxUnavailableError("the sandbox of this session was closed")
            try:
                self._start()
            except SandboxUnavailableError as exc:
                self._failure = exc
                self._cleanup_dirs()
                raise

    def _start(self) -> None:
        binary = find_bwrap(self._bwrap_name)
        if binary is None:
            raise SandboxUnavailableError(
                f"the sandbox cannot start: bubblewrap ({self._bwrap_name or 'bwrap'}) is not "
                "installed or not on PATH. Install it (`sudo apt install bubblewrap`, "
                "`sudo dnf install bubblewrap`) or choose another backend "
                f"(herald config set terminal.backend local). {_NOT_ON_HOST}"
            )
        remove_dead_session_dirs()
        self._session_dir = tempfile.mkdtemp(prefix=f"{SESSION_DIR_PREFIX}{os.getpid()}-")
        for sub in ("tmp", "home"):
            os.mkdir(os.path.join(self._session_dir, sub), 0o700)
        if self.spec.total_memory_mb:
            # Best effort: without a writable memory cgroup only the per-process
            # rlimit holds (herald sandbox explain says which).
            self._memory_cgroup = MemoryCgroup.create(self.spec.total_memory_mb)
            self.total_memory_by_cgroup = self._memory_cgroup is not None
        if self.limits_processes_by_cgroup:
            self._cgroup = PidsCgroup.create(self.spec.max_processes)
            if self._cgroup is None:
                raise SandboxUnavailableError(
                    "the sandbox cannot enforce terminal.sandbox.max_processes: Herald runs as "
                    "root, where the kernel ignores the per-user process limit, and no "
                    "writable pids cgroup was found. Run Herald as a normal user, or set "
                    "terminal.sandbox.max_processes 0 to run without a process limit. "
                    + _NOT_ON_HOST
                )
        try:
            probe = subprocess.run(
                self.argv(["true"], self._cwd, binary=binary),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=_PROBE_TIMEOUT_S,
                env=self.child_env(),
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise SandboxUnavailableError(
                f"the sandbox cannot start: running {binary} failed ({exc}). {_NOT_ON_HOST}"
            ) from None
        if probe.returncode != 0:
            raise SandboxUnavailableError(self._diagnose(binary, probe.stderr))
        self._bwrap = binary

    @staticmethod
    def _diagnose(binary: str, stderr: bytes) -> str:
        lines = [ln.strip() for ln in stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
        detail = lines[-1] if lines else "it exited with an error"
        lowered = detail.lower()
        if any(w in lowered for w in ("namespace", "uid map", "not permitted", "permission")):
            return (
                f"the sandbox cannot start: {binary} said {detail!r}. {USERNS_HELP} {_NOT_ON_HOST}"
            )
        return f"the sandbox cannot start: {binary} said {detail!r}. {_NOT_ON_HOST}"

    # -- the bwrap command line -------------------------------------------------------

    def argv(self, inner: list[str], cwd: str, *, binary: str | None = None) -> list[str]:
        """The full command line running `inner` in this session's sandbox."""
        assert self._session_dir is not None
        spec = self.spec
        args = [binary or self._bwrap or "bwrap", "--unshare-all", "--unshare-user"]
        if spec.network:
            args.append("--share-net")
        args += ["--die-with-parent", "--new-session", "--hostname", "herald-sandbox"]
        if os.geteuid() == 0:
            args += ["--cap-drop", "ALL"]
        for path in SYSTEM_DIRS:
            if os.path.islink(path):
                args += ["--symlink", os.readlink(path), path]
            elif os.path.isdir(path):
                args += ["--ro-bind", path, path]
        args += ["--proc", "/proc", "--dev", "/dev"]
        args += ["--bind", os.path.join(self._session_dir, "tmp"), "/tmp"]
        binds: list[tuple[str, list[str]]] = []
        explicit = {m.path for m in spec.mounts}
        if self._home not in ("/", spec.workdir) and self._home not in explicit:
            binds.append((self._home, ["--bind", os.path.join(self._session_dir, "home")]))
        binds.append((spec.workdir, ["--bind", spec.workdir]))
        for mount in spec.mounts:
            binds.append(
                (mount.path, ["--bind" if mount.mode == "rw" else "--ro-bind", mount.path])
            )
        if spec.network and os.path.islink("/etc/resolv.conf"):
            # A stub resolver file under /run: show just that file, read-only.
            real = os.path.realpath("/etc/resolv.conf")
            if os.path.isfile(real) and not any(is_within(real, d) for d in SYSTEM_DIRS):
                binds.append((real, ["--ro-bind", real]))
        # Parents first: a mount inside another must come after it.
        for dest, how in sorted(binds, key=lambda b: b[0].count("/")):
            args += [*how, dest]
        hidden = self.hidden()
        plan = self.protections(tuple(hidden))
        self._placeholders += make_placeholders(plan)
        for item in plan:
            args += ["--bind" if item.action == "pin" else "--ro-bind", item.path, item.path]
        for path in hidden:
            if os.path.isdir(path) and not os.path.islink(path):
                args += ["--tmpfs", path, "--remount-ro", path]
            else:
                args += ["--ro-bind", "/dev/null", path]
        args += ["--remount-ro", "/", "--chdir", cwd, "--"]
        prefix: list[str] = []
        groups = [g.procs_file for g in (self._cgroup, self._memory_cgroup) if g is not None]
        if groups:
            # Join the session's cgroups before bwrap starts: all it forks stays inside.
            script = "".join(f"echo $$ > {shlex.quote(f)} && " for f in groups)
            prefix = ["/bin/sh", "-c", script + 'exec "$@"', "sh"]
        return [*prefix, *args, *inner]

    def protections(self, hidden: tuple[str, ...] = ()) -> list[Protection]:
        """What this session keeps read-only inside its writable mounts (see
        herald.environments.protected), without creating anything."""
        spec = self.spec
        rw_roots = (spec.workdir, *spec.rw_paths_outside_workdir())
        try:
            return sandbox_protections(spec.workdir, rw_roots, self._home, hidden)
        except UnprotectableError as exc:
            raise SandboxUnavailableError(
                f"the sandbox cannot start: {exc}. {_NOT_ON_HOST}"
            ) from None

    def hidden(self) -> list[str]:
        """The secret paths this session masks."""
        return hidden_paths(self.spec, home=self._home, herald_home=self._herald_home)

    def _wrapper(self, command: str) -> list[str]:
        """bash inside the sandbox: set the rlimits, then run `command`."""
        spec = self.spec
        limits = []
        if spec.memory_mb:
            limits.append(f"ulimit -v {spec.memory_mb * 1024}")
        if spec.cpu_seconds:
            limits.append(f"ulimit -t {spec.cpu_seconds}")
        if spec.max_processes and not self.limits_processes_by_cgroup:
            limits.append(f"ulimit -u {spec.max_processes}")
        setup = "".join(f"{limit} || exit 126; " for limit in limits)
        return [_bash(), "-c", f"{setup}exec {_bash()} -c {shlex.quote(command)}"]

    def child_env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        env = build_child_env(self._secrets, extra, base=self._base_env)
        for name in _HOST_ONLY_VARS:
            if extra is None or name not in extra:
                env.pop(name, None)
        env["HOME"] = self._home
        env["TMPDIR"] = "/tmp"
        return env

    def sandbox_pids(self) -> list[int]:
        """Host pids of the bwrap monitors running now (for diagnostics and tests)."""
        with self._lock:
            return [p.pid for p in self._live if p.poll() is None]

    # -- commands -----------------------------------------------------------------

    def _workdir(self, cwd: str | None) -> str:
        workdir = self.resolve(cwd) if cwd else self._cwd
        info = self.stat(workdir)
        if info is None or not info.is_dir:
            raise FileNotFoundError(f"working directory does not exist: {workdir}")
        return workdir

    def _popen(self, inner: list[str], cwd: str, env: dict[str, str], *, stdin: int):
        proc = subprocess.Popen(
            self.argv(inner, cwd),
            env=env,
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        with self._lock:
            self._live = {p for p in self._live if p.poll() is None}
            self._live.add(proc)
        return proc

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
        self.ensure_ready()
        workdir = self._workdir(cwd)
        child_env = self.child_env(env)
        started = time.monotonic()
        proc = self._popen(self._wrapper(command), workdir, child_env, stdin=subprocess.DEVNULL)
        return drive_to_completion(
            proc,
            started=started,
            timeout=timeout,
            cancel=cancel,
            on_activity=on_activity,
            activity_interval=self._activity_interval,
            max_output_bytes=self._max_output_bytes,
        )

    def spawn(
        self, command: str, *, cwd: str | None, env: Mapping[str, str] | None = None
    ) -> BackgroundProcess:
        self.ensure_ready()
        proc = self._popen(
            self._wrapper(command), self._workdir(cwd), self.child_env(env), stdin=subprocess.PIPE
        )
        process = PipedBackgroundProcess(
            proc, command, kill=lambda: kill_process_group(proc.pid, proc)
        )
        return self._background.add(process)

    def processes(self) -> list[BackgroundProcess]:
        """Background processes started here, oldest first."""
        return self._background.all()

    def close(self) -> None:
        """Kill everything the session started and delete its private /tmp and home."""
        with self._ready_lock:
            self._closed = True
        self._background.kill_all()
        with self._lock:
            live = list(self._live)
        for proc in live:
            if proc.poll() is None:
                kill_process_group(proc.pid, proc)
                proc.wait()
        self._cleanup_dirs()

    def _cleanup_dirs(self) -> None:
        remove_placeholders(self._placeholders)
        self._placeholders = []
        if self._cgroup is not None:
            self._cgroup.remove()
            self._cgroup = None
        if self._memory_cgroup is not None:
            self._memory_cgroup.remove()
            self._memory_cgroup = None
        if self._session_dir is not None:
            shutil.rmtree(self._session_dir, ignore_errors=True)
            self._session_dir = None

    # -- files --------------------------------------------------------------------

    def run_script(self, script: str, *, data: bytes | None = None) -> tuple[int, bytes, bytes]:
        """Run a short script in the sandbox: (exit code, stdout, stderr)."""
        self.ensure_ready()
        proc = subprocess.Popen(
            self.argv([_bash(), "-c", script], self._cwd),
            env=self.child_env(),
            stdin=subprocess.PIPE if data is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        try:
            out, err = proc.communicate(data, timeout=_FILE_OP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            kill_process_group(proc.pid, proc)
            proc.communicate()
            raise EnvironmentConnectionError(
                f"a file operation in the sandbox did not finish within {_FILE_OP_TIMEOUT_S:g} s"
            ) from None
        if proc.returncode == 1 and err.startswith(b"bwrap:"):
            detail = err.decode("utf-8", "replace").strip()
            raise EnvironmentConnectionError(f"the sandbox failed to start: {detail}")
        return proc.returncode, out, err

    def resolve(self, path: str, cwd: str | None = None) -> str:
        def expand(p: str) -> str:
            return self._home + p[1:] if p == "~" or p.startswith("~/") else p

        base = os.path.join(self._cwd, expand(cwd)) if cwd else self._cwd
        return os.path.normpath(os.path.join(base, expand(path)))

    @property
    def cwd(self) -> str:
        return self._cwd
