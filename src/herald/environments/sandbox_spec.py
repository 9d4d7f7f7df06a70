"""`SandboxSpec`: what a sandboxed session may see and use, shared by the bwrap
and docker backends, `herald sandbox explain` and the relaxed approval policy.

Paths inside a sandbox are the host's paths: the working directory and every
extra mount appear at the same absolute path, so a path the model reads in a
command's output means the same thing to the file tools and to the approval
check.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from herald.config import ConfigError
from herald.config.schema_terminal import SandboxConfig

MountMode = Literal["ro", "rw"]

# Host directories every sandbox sees read-only (the ones that exist).
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")

# Secrets under /etc hidden even though /etc is visible.
ETC_SECRETS = (
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/etc/ssl/private",
    "/etc/security/opasswd",
)

# Credentials under a home directory hidden wherever a mount would expose them:
# keys, registry and cloud tokens, password stores, browser profiles (cookies,
# saved passwords), and shell histories (commands typed with secrets in them).
HOME_SECRETS = (
    ".ssh", ".gnupg", ".password-store", ".local/share/keyrings", ".aws", ".azure",
    ".kube", ".docker", ".netrc", ".pgpass", ".git-credentials", ".npmrc", ".yarnrc",
    ".yarnrc.yml", ".pypirc", ".cargo/credentials", ".cargo/credentials.toml",
    ".gem/credentials", ".m2/settings.xml", ".gradle/gradle.properties",
    ".composer/auth.json", ".config/composer/auth.json", ".vault-token", ".boto",
    ".s3cfg", ".my.cnf", ".terraformrc", ".terraform.d/credentials.tfrc.json", ".oci",
    ".config/gcloud", ".config/gh", ".config/hub", ".config/rclone", ".config/op",
    ".config/doctl", ".config/sops", ".config/configstore", ".config/helm",
    ".mozilla", ".thunderbird", ".config/google-chrome", ".config/chromium",
    ".config/BraveSoftware", ".config/microsoft-edge", ".config/vivaldi",
    ".var/app", ".bash_history", ".zsh_history", ".python_history", ".psql_history",
    ".mysql_history", ".node_repl_history", ".lesshst", ".viminfo",
    "Library/Keychains", "Library/Cookies",
)  # fmt: skip


@dataclass(frozen=True)
class Mount:
    path: str  # absolute, normalised; the same path inside the sandbox
    mode: MountMode

    def __str__(self) -> str:
        return f"{self.path}:{self.mode}"


@dataclass(frozen=True)
class SandboxSpec:
    workdir: str
    mounts: tuple[Mount, ...] = ()
    network: bool = False
    memory_mb: int = 0
    total_memory_mb: int = 0  # the whole sandbox, by cgroup where one is writable
    cpu_seconds: int = 0
    max_processes: int = 0

    @classmethod
    def from_config(cls, sandbox: SandboxConfig, workdir: str) -> SandboxSpec:
        """The spec for one session; a bad working directory or mount raises
        ConfigError naming the key to fix."""
        workdir = os.path.normpath(os.path.abspath(os.path.expanduser(workdir)))
        if not os.path.isdir(workdir):
            raise ConfigError(
                f"terminal.cwd: {workdir!r} is not a directory; the sandbox mounts the "
                "working directory, so set an existing one (herald config set terminal.cwd PATH)"
            )
        problem = workdir_problem(workdir, os.path.expanduser("~"))
        if problem:
            raise ConfigError(problem)
        mounts: list[Mount] = []
        for entry in sandbox.mounts:
            raw, _, mode = entry.rpartition(":")
            path = os.path.normpath(os.path.abspath(os.path.expanduser(raw.strip())))
            if not os.path.exists(path):
                raise ConfigError(
                    f"terminal.sandbox.mounts: {raw!r} does not exist; create it or remove "
                    "the entry (herald config show terminal.sandbox)"
                )
            if path == "/":
                raise ConfigError("terminal.sandbox.mounts: / cannot be mounted into the sandbox")
            home = os.path.expanduser("~")
            if mode == "rw" and is_within(home, path):
                raise ConfigError(
                    f"terminal.sandbox.mounts: {raw!r} is your home directory or holds it; "
                    "mounting it read-write would let the sandbox plant commands in your "
                    "shell start-up files. Mount the directories you need instead, or use :ro"
                )
            mounts.append(Mount(path, mode))  # type: ignore[arg-type]
        return cls(
            workdir=workdir,
            mounts=tuple(mounts),
            network=sandbox.network,
            memory_mb=sandbox.memory_mb,
            total_memory_mb=sandbox.total_memory_mb,
            cpu_seconds=sandbox.cpu_seconds,
            max_processes=sandbox.max_processes,
        )

    def rw_paths_outside_workdir(self) -> tuple[str, ...]:
        """Writable host paths beyond the working directory: what a command can
        damage on the host from inside the sandbox."""
        return tuple(
            m.path for m in self.mounts if m.mode == "rw" and not is_within(m.path, self.workdir)
        )

    def visible_roots(self) -> tuple[str, ...]:
        """The working directory and every extra mount."""
        return (self.workdir, *(m.path for m in self.mounts))


def workdir_problem(workdir: str, home: str) -> str | None:
    """Why workdir cannot be a sandbox's read-write working directory, or None."""
    home = os.path.normpath(home)
    if workdir == "/":
        return (
            "the sandbox's working directory cannot be / (that would expose the whole "
            "machine read-write); start Herald in a project directory or set terminal.cwd"
        )
    if is_within(home, workdir):
        which = "is your home directory" if workdir == home else f"holds your home ({home})"
        return (
            f"the sandbox refuses {workdir} as its working directory: it {which}, so the "
            "sandbox could read your credentials and plant commands in your shell start-up "
            "files. Start Herald in a project directory or set terminal.cwd to one"
        )
    try:
        owner = os.stat(workdir).st_uid
    except OSError as exc:
        return f"the sandbox cannot use {workdir} as its working directory: {exc}"
    if owner != os.geteuid():
        return (
            f"the sandbox refuses {workdir} as its working directory: it belongs to uid "
            f"{owner}, not to you (uid {os.geteuid()}); work in a directory you own"
        )
    return None


def is_within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def hidden_paths(spec: SandboxSpec, *, home: str, herald_home: str) -> list[str]:
    """Existing secret paths that a visible mount would otherwise expose: Herald's
    home, credential files under the home directory, and secrets under /etc. A
    path the user mounted explicitly stays visible."""
    explicit = {m.path for m in spec.mounts}
    candidates = [herald_home, *(os.path.join(home, name) for name in HOME_SECRETS)]
    roots = spec.visible_roots()
    hidden: list[str] = []
    for path in candidates:
        # A symlink is masked at its target: a link leading out of the visible
        # mounts dangles inside the sandbox anyway (and bwrap cannot bind onto it).
        real = os.path.realpath(path)
        if (
            path not in explicit
            and real not in explicit
            and os.path.exists(real)
            and any(is_within(path, root) for root in roots)
            and any(is_within(real, root) for root in roots)
            and real not in hidden
        ):
            hidden.append(real)
    hidden += [p for p in ETC_SECRETS if os.path.lexists(p) and p not in explicit]
    hidden += [
        str(p) for p in sorted(Path("/etc/ssh").glob("ssh_host_*_key")) if str(p) not in explicit
    ]
    return hidden
