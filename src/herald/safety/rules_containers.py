"""Rules for containers that are root on the host: ``docker``/``podman run``
with the host's root, home or system directories mounted, the Docker socket
mounted, ``--privileged``, host PID/IPC/user namespaces, dangerous
capabilities or disabled confinement, host networking together with host
mounts; and ``nsenter``/``chroot``, which step into another root directly.

The effect judged: a process that can read or change the host as root,
whatever flag spelling produced it.
"""

from __future__ import annotations

import re

from herald.safety.effects import in_workdir, resolved, system_location
from herald.safety.invocation import Context, Invocation
from herald.safety.paths import Target, classify_delete_target, sensitive_target
from herald.safety.shell_ast import SimpleCommand
from herald.safety.static_eval import command_name

CONTAINER_HOST = "dangerous.container_host"

_RUNNERS = frozenset({"docker", "podman", "nerdctl", "finch", "lima", "colima"})
_RUN_VERBS = frozenset({"run", "create", "exec"})
# pflag options taking a value as the next word (only those the rule reads
# or that commonly precede the image name).
_VALUE_FLAGS = frozenset({"-v", "--volume", "--mount", "--pid", "--net", "--network", "--ipc",
                          "--uts", "--userns", "--cgroupns", "--cap-add", "--security-opt",
                          "--device", "-e", "--env", "--name", "-p", "--publish", "-w",
                          "--workdir", "-u", "--user", "--entrypoint", "--env-file", "-l",
                          "--label", "--platform", "--hostname", "-h", "--restart",
                          "--memory", "-m", "--cpus", "--add-host", "--dns", "--tmpfs",
                          "--volumes-from", "--log-driver", "--gpus", "--shm-size",
                          "--ulimit", "--group-add", "--health-cmd", "--pull", "--runtime",
                          "--stop-signal", "--network-alias", "--mac-address", "--ip"})  # fmt: skip
_HOST_NAMESPACES = frozenset({"--pid", "--ipc", "--uts", "--userns", "--cgroupns"})
_ROOT_CAPS = frozenset({"ALL", "SYS_ADMIN", "SYS_PTRACE", "SYS_MODULE", "DAC_READ_SEARCH",
                        "DAC_OVERRIDE", "SYS_RAWIO", "NET_ADMIN", "BPF", "SYS_BOOT"})  # fmt: skip
_PREFIXES = frozenset(
    {
        "sudo",
        "doas",
        "pkexec",
        "run0",
        "env",
        "nohup",
        "nice",
        "time",
        "exec",
        "command",
        "setsid",
        "timeout",
        "unshare",
    }
)
_SOCKETS = ("docker.sock", "podman.sock", "containerd.sock", "crio.sock")


def _options(args: list[str]) -> tuple[str, list[tuple[str, str | None]]]:
    """(verb, options up to the image name) of `docker [globals] run …`."""
    i = 0
    while i < len(args) and args[i].startswith("-"):
        i += 2 if args[i] in ("-H", "--host", "-c", "--context", "--config", "-l",
                              "--log-level") else 1  # fmt: skip
    pos = args[i:]
    if pos[:1] == ["container"]:
        pos = pos[1:]
    if not pos or pos[0] not in _RUN_VERBS:
        return "", []
    verb, rest = pos[0], pos[1:]
    opts: list[tuple[str, str | None]] = []
    j = 0
    while j < len(rest) and rest[j].startswith("-"):
        key, eq, value = rest[j].partition("=")
        if eq:
            opts.append((key, value))
        elif key in _VALUE_FLAGS and j + 1 < len(rest):
            opts.append((key, rest[j + 1]))
            j += 1
        else:
            opts.append((key, None))
        j += 1
    return verb, opts


def _mount_source(flag: str, value: str) -> str:
    if flag == "--mount":
        for part in value.split(","):
            key, _, val = part.partition("=")
            if key.strip() in ("source", "src"):
                return val.strip()
        return ""
    return value.split(":", 1)[0] if value.startswith(("/", "~", "$", ".")) else ""


def _host_mount(source: str, ctx: Context) -> str:
    """Why mounting source exposes the host, or ''."""
    if not source or in_workdir(source, ctx):
        return ""
    if source.endswith(_SOCKETS):
        return f"the container engine's socket ({source}), i.e. root on the host"
    p = resolved(source, ctx)
    if classify_delete_target(p, ctx.env) is not Target.OTHER:
        return f"the host's {source}"
    if p in ("/etc", "/proc", "/sys", "/dev", "/boot", "/run", "/var/run") or system_location(
        p, ctx
    ):
        return f"the host's system directory {source}"
    if sensitive_target(p, ctx.env):
        return f"the host's credentials or settings ({source})"
    return ""


def rule_container_host(inv: Invocation, ctx: Context) -> None:
    if inv.name not in _RUNNERS:
        return
    verb, opts = _options(inv.args)
    if not verb:
        return
    reasons: list[str] = []
    mounts = 0
    host_net = False
    for flag, value in opts:
        if flag == "--privileged" and (value is None or value.lower() != "false"):
            reasons.append("runs a privileged container (root on the host)")
        elif flag in _HOST_NAMESPACES and value == "host":
            reasons.append(f"shares the host's {flag[2:]} namespace")
        elif flag in ("--net", "--network") and value == "host":
            host_net = True
        elif flag == "--cap-add" and value and value.upper().removeprefix("CAP_") in _ROOT_CAPS:
            reasons.append(f"grants the container {value}")
        elif (
            flag == "--security-opt"
            and value
            and (
                "unconfined" in value
                or value in ("label=disable", "label:disable", "no-new-privileges=false")
            )
        ):
            reasons.append(f"turns off the container's confinement ({value})")
        elif (
            flag == "--device" and value and value.startswith("/dev/") and "/dev/fuse" not in value
        ):
            reasons.append(f"hands the host device {value.split(':', 1)[0]} to the container")
        elif flag in ("-v", "--volume", "--mount") and value:
            mounts += 1
            why = _host_mount(_mount_source(flag, value), ctx)
            if why:
                reasons.append(f"mounts {why} into the container")
    if host_net and mounts:
        reasons.append("uses the host's network together with host mounts")
    if reasons:
        ctx.approval(CONTAINER_HOST, f"{'; '.join(reasons[:2])} ({inv.name} {verb})", inv.segment)


_KUBE_HOST_RE = re.compile(
    r'"(?:hostPID|hostNetwork|hostIPC|privileged|allowPrivilegeEscalation)"\s*:\s*true|"hostPath"'
)


def rule_kube_host(inv: Invocation, ctx: Context) -> None:
    """kubectl debug node/… (a pod with the node's root mounted), kubectl run
    with overrides that share host namespaces, mount host paths or run privileged."""
    args = inv.args
    pos = [a for a in args if not a.startswith("-")]
    what = ""
    if "debug" in pos[:2] and any(a.startswith(("node/", "nodes/")) for a in pos):
        what = f"opens a root shell on a cluster node ({inv.name} debug node/…)"
    elif ("run" in pos[:2] or "debug" in pos[:2]) and (
        any(a in ("--privileged", "--privileged=true") for a in args)
        or any(_KUBE_HOST_RE.search(a) for a in args if a.startswith(("--overrides", "{")))
    ):
        what = f"starts a pod with host privileges or host mounts ({inv.name} run)"
    if what:
        ctx.approval(CONTAINER_HOST, what, inv.segment)


def rule_nsenter(inv: Invocation, ctx: Context) -> None:
    if inv.args and set(inv.args) <= {"--help", "-h", "--version", "-V"}:
        return
    ctx.approval(
        CONTAINER_HOST,
        "enters another process's namespaces, e.g. the host's (nsenter)",
        inv.segment,
    )


def check_root_switchers(cmd: SimpleCommand, ctx: Context) -> None:
    """``chroot DIR [cmd]`` is peeled off as a wrapper before the rules run,
    so it is judged here on the raw words: switching into another root
    (a host mount, a rescue image) runs its programs as root."""
    if not cmd.words:
        return
    first = command_name(cmd.words[0].text)  # cheap test first: this runs on every command
    if first != "chroot" and first not in _PREFIXES:
        return
    for word in cmd.words[:6]:
        if command_name(word.text) == "chroot":
            ctx.approval(
                CONTAINER_HOST, "switches to another root filesystem as root (chroot)", cmd.source
            )
            return
