"""Rules for commands that destroy data or stop the machine: deletes, disk
formatting and raw device writes, mass kills, power-off, broad permission
changes. Each rule takes an `Invocation` (wrappers already peeled off) and
records findings on the `Context`; the table lives in
:mod:`herald.safety.command_rules`.
"""

from __future__ import annotations

import posixpath
import re

from herald.safety.carriers import unwrap
from herald.safety.invocation import Context, Invocation, parse_options
from herald.safety.paths import (
    SCRATCH_DIRS,
    Target,
    canonical,
    classify_delete_target,
    is_block_device,
    is_broad_tree,
    sensitive_target,
)
from herald.safety.shell_ast import SimpleCommand

_HELP_ONLY = frozenset({"--help", "-h", "--version", "-V", "--usage"})
_DELETE_RULES = {
    Target.ROOT: ("hardline.delete_root", "deletes the root directory / (everything)"),
    Target.SYSTEM: ("hardline.delete_system_dir", "deletes a system directory"),
    Target.HOME: ("hardline.delete_home", "deletes a home directory"),
}


def _help_only(inv: Invocation) -> bool:
    return bool(inv.args) and all(a in _HELP_ONLY for a in inv.args)


def judge_delete(
    inv: Invocation, ctx: Context, targets: list[str], *, recursive: bool, forced: bool
) -> None:
    """Shared by rm, find -delete, rsync --delete: the worst target decides."""
    segment = inv.segment
    for target in targets:
        kind = classify_delete_target(ctx.resolve(target), ctx.env)
        if kind is Target.OTHER:
            continue
        is_glob = any(ch in "*?[" for ch in target)
        if recursive or (is_glob and kind in (Target.ROOT, Target.SYSTEM)):
            rule, what = _DELETE_RULES[kind]
            ctx.hardline(rule, f"{what} ({target})", segment)
            return
        if is_glob:
            ctx.approval(
                "dangerous.delete", f"deletes every file in a home directory ({target})", segment
            )
            return
    if recursive:
        shown = " ".join(targets[:3]) or "files listed by another command"
        ctx.approval("dangerous.recursive_delete", f"deletes recursively: {shown}", segment)
    elif forced and not (len(targets) == 1 and _in_working_tree(targets[0], ctx)):
        shown = " ".join(targets[:3]) or "files listed by another command"
        ctx.approval("dangerous.delete", f"force-deletes {shown}", segment)


def _working_tree_file(path: str) -> bool:
    """One plainly named file below the working directory (``readme.txt``,
    ``src/old.py``): no glob, no variable, no ``..``, not inside ``.git``."""
    if not path or path.startswith(("/", "~", "-")) or any(c in path for c in "*?[$`{"):
        return False
    parts = [p for p in path.split("/") if p not in ("", ".")]
    return bool(parts) and ".." not in parts and ".git" not in parts


def _in_working_tree(target: str, ctx: Context) -> bool:
    """target names one plain file below the directory the command starts in
    (the caller's PWD), also after a ``cd`` into a subdirectory of it."""
    if not _working_tree_file(target):
        return False
    start = (ctx.env or {}).get("PWD")
    if ctx.cwd is None or ctx.cwd == start:
        return True
    resolved = posixpath.normpath(ctx.resolve(target))
    return bool(start) and resolved.startswith(posixpath.normpath(start).rstrip("/") + "/")


def rule_rm(inv: Invocation, ctx: Context) -> None:
    opts = parse_options(inv.arg_words, stop_at_positional=False)
    flags = {f for f, _ in opts.flags}
    recursive = bool(flags & {"-r", "-R", "--recursive"})
    forced = bool(flags & {"-f", "--force"})
    targets = [w.text for w in opts.positional]
    if inv.extra_args:
        ctx.approval(
            "dangerous.find_delete",
            "deletes the files another command lists (xargs rm)",
            inv.segment,
        )
    judge_delete(inv, ctx, targets, recursive=recursive, forced=forced)


def rule_shred(inv: Invocation, ctx: Context) -> None:
    opts = parse_options(inv.arg_words, short_values="nsx", stop_at_positional=False)
    files = [w.text for w in opts.positional]
    devices = [f for f in files if is_block_device(f)]
    if devices:
        ctx.hardline(
            "hardline.block_device_write", f"overwrites the disk {devices[0]}", inv.segment
        )
    elif files or inv.extra_args:
        ctx.approval(
            "dangerous.delete", f"destroys file contents beyond recovery ({inv.name})", inv.segment
        )


# Predicates that select some files; without one, find matches everything.
_FIND_FILTERS = frozenset({"-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename",
                           "-regex", "-iregex", "-mtime", "-mmin", "-atime", "-amin", "-ctime",
                           "-cmin", "-newer", "-size", "-user", "-group", "-perm", "-empty",
                           "-inum", "-links", "-lname", "-ilname", "-samefile", "-uid", "-gid"})  # fmt: skip
_FIND_DELETERS = frozenset({"rm", "shred", "unlink", "srm", "wipe"})
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})


def rule_find(inv: Invocation, ctx: Context) -> None:
    words = inv.arg_words
    i = 0
    while (i < len(words) and words[i].text in ("-H", "-L", "-P")) or (
        i < len(words) and words[i].text.startswith(("-O", "-D"))
    ):
        i += 2 if words[i].text == "-D" else 1
    starts: list[str] = []
    while i < len(words) and not words[i].text.startswith(("-", "(", "!", ")")):
        starts.append(words[i].text)
        i += 1
    starts = starts or ["."]
    deletes = False
    while i < len(words):
        text = words[i].text
        if text == "-delete":
            deletes = True
        elif text in _FIND_EXEC:
            j = i + 1
            while (
                j < len(words)
                and words[j].text not in (";", "+")
                and not (words[j].text.endswith("+") and words[j - 1].text == "{}")
            ):
                j += 1
            inner = unwrap(SimpleCommand(words[i + 1 : j], [], [], inv.segment), ctx)
            if inner is not None:
                if inner.name in _FIND_DELETERS:
                    deletes = True
                # every rule runs on the command find runs (rm -rf / included)
                ctx.invocation(Invocation(words=inner.words, cmd=inv.cmd, extra_args=True))
            i = j
        i += 1
    if not deletes:
        return
    narrowed = any(w.text in _FIND_FILTERS for w in words)
    for start in starts:
        start = ctx.resolve(start)
        kind = classify_delete_target(start, ctx.env)
        if narrowed or canonical(start, ctx.env) in SCRATCH_DIRS:
            break  # a selective clean-up, not a wipe
        if kind is not Target.OTHER:
            rule, what = _DELETE_RULES[kind]
            ctx.hardline(rule, f"{what} (find {start} … -delete)", inv.segment)
            return
    ctx.approval(
        "dangerous.find_delete",
        f"deletes the files find matches under {' '.join(starts)}",
        inv.segment,
    )


def rule_rsync(inv: Invocation, ctx: Context) -> None:
    opts = parse_options(inv.arg_words, short_values="efT", stop_at_positional=False)
    if not any(f.startswith("--delete") or f == "--remove-source-files" for f, _ in opts.flags):
        return
    if len(opts.positional) >= 2:
        dest = opts.positional[-1].text
        if ":" not in dest.split("/", 1)[0]:
            judge_delete(inv, ctx, [dest], recursive=True, forced=False)


# -- disks ----------------------------------------------------------------------

_MKFS_NAMES = frozenset({"mkfs", "mke2fs", "mkdosfs", "mkntfs", "mkexfatfs", "mkreiserfs",
                         "mkjfs", "newfs", "mkfs_msdos"})  # fmt: skip
_DISKUTIL_ERASE = frozenset({"erasedisk", "erasevolume", "zerodisk", "randomdisk", "secureerase",
                             "partitiondisk", "reformat", "deletecontainer", "deletevolume"})  # fmt: skip


def is_mkfs(name: str) -> bool:
    return name in _MKFS_NAMES or name.startswith(("mkfs.", "newfs_"))


def rule_mkfs(inv: Invocation, ctx: Context) -> None:
    if not _help_only(inv):
        ctx.hardline("hardline.mkfs", f"formats a filesystem ({inv.name})", inv.segment)


def rule_wipefs(inv: Invocation, ctx: Context) -> None:
    opts = parse_options(inv.arg_words, short_values="otp", stop_at_positional=False)
    if opts.has("-a", "--all", "-o", "--offset") and not opts.has("-n", "--no-act"):
        ctx.hardline("hardline.mkfs", "erases filesystem signatures (wipefs)", inv.segment)


def rule_diskutil(inv: Invocation, ctx: Context) -> None:
    verbs = {a.lower() for a in inv.args[:2]}
    if verbs & _DISKUTIL_ERASE:
        ctx.hardline("hardline.mkfs", "erases or repartitions a disk (diskutil)", inv.segment)


def rule_device_tools(inv: Invocation, ctx: Context) -> None:
    """blkdiscard, mkswap, nvme format, hdparm --security-erase on raw devices."""
    devices = [a for a in inv.args if is_block_device(a)]
    args = set(inv.args)
    if inv.name == "nvme":
        if inv.args[:1] and inv.args[0] in ("format", "sanitize"):
            ctx.hardline("hardline.block_device_write", "erases an NVMe drive", inv.segment)
        return
    if inv.name == "hdparm":
        if any(
            a.startswith(("--security-erase", "--trim-sector-ranges", "--write-sector"))
            for a in args
        ):
            ctx.hardline(
                "hardline.block_device_write", "erases or writes disk sectors (hdparm)", inv.segment
            )
        return
    if devices:
        ctx.hardline(
            "hardline.block_device_write",
            f"overwrites the disk {devices[0]} ({inv.name})",
            inv.segment,
        )


_PARTITION_LIST_FLAGS = frozenset({"-l", "--list", "-p", "--print", "-s", "--show-size", "-d",
                                   "--dump", "-J", "--json", "--verify", "-V", "-v"})  # fmt: skip


def rule_partition(inv: Invocation, ctx: Context) -> None:
    args = inv.args
    if not any(a.startswith("/dev/") for a in args):
        return
    if set(args) & _PARTITION_LIST_FLAGS or (inv.name == "parted" and "print" in args):
        return
    ctx.approval(
        "dangerous.partition_table", f"changes a disk's partition table ({inv.name})", inv.segment
    )


# -- processes ------------------------------------------------------------------


def rule_kill(inv: Invocation, ctx: Context) -> None:
    words = inv.arg_words
    signal_given = False
    pids: list[str] = []
    i = 0
    if any("herald" in w.raw.lower() for w in words):
        ctx.approval("dangerous.herald_gateway", "signals Herald's own process", inv.segment)
    while i < len(words):
        text = words[i].text
        if text == "--":
            pids.extend(w.text for w in words[i + 1 :])
            break
        if text in ("-l", "-L", "--list", "--table"):
            return
        if text in ("-s", "-n", "--signal"):
            signal_given = True
            i += 2
            continue
        if text.startswith("-") and len(text) > 1 and not signal_given and not pids:
            signal_given = True
        else:
            pids.append(text)
        i += 1
    for pid in pids:
        if pid == "-1":
            ctx.hardline("hardline.kill_all", "signals every process (kill … -1)", inv.segment)
            return
    for pid in pids:
        if pid == "0" or re.fullmatch(r"-\d+", pid):
            ctx.approval(
                "dangerous.kill_process_group",
                f"signals a whole process group ({pid})",
                inv.segment,
            )
            return
        if pid == "1":
            ctx.approval("dangerous.kill_init", "signals PID 1 (init)", inv.segment)
            return


def rule_cd(inv: Invocation, ctx: Context) -> None:
    """cd/pushd: later relative paths in the same command line resolve against it."""
    args = [a for a in inv.args if not a.startswith("-") or a == "-"]
    ctx.change_directory(args[0] if args else "~")


def rule_pkill(inv: Invocation, ctx: Context) -> None:
    opts = parse_options(
        inv.arg_words, short_values="gGPstuUFn", long_values={"--pgroup", "--group", "--parent",
        "--session", "--terminal", "--euid", "--uid", "--pidfile", "--signal", "--ns", "--user"},
        stop_at_positional=False,
    )  # fmt: skip
    patterns = [w.text for w in opts.positional]
    if any("herald" in p.lower() for p in patterns):
        ctx.approval("dangerous.herald_gateway", "kills Herald's own process", inv.segment)
        return
    if inv.name == "pkill" and opts.has("-g", "--pgroup", "-s", "--session"):
        ctx.approval(
            "dangerous.kill_process_group", "kills a whole process group or session", inv.segment
        )
    elif opts.has("-u", "-U", "--uid", "--euid", "--user") and not patterns:
        ctx.approval("dangerous.kill_process_group", "kills every process of a user", inv.segment)


def rule_killall5(inv: Invocation, ctx: Context) -> None:
    ctx.hardline("hardline.kill_all", "signals every process (killall5)", inv.segment)


# -- power ----------------------------------------------------------------------

_POWER_VERBS = frozenset({"poweroff", "reboot", "halt", "kexec", "soft-reboot"})
_POWER_TARGETS = frozenset({"poweroff", "reboot", "halt", "kexec", "shutdown", "ctrl-alt-del",
                            "soft-reboot"})  # fmt: skip
_SYSTEMCTL_VALUES = frozenset({"-H", "-M", "-t", "-p", "-s", "-n", "-o", "--host", "--machine",
                               "--type", "--property", "--signal", "--lines", "--output", "--root",
                               "--kill-whom", "--job-mode", "--state", "--what", "--image"})  # fmt: skip
_STOP_VERBS = frozenset({"stop", "disable", "mask", "kill", "restart", "try-restart",
                         "reload-or-restart", "try-reload-or-restart", "condrestart",
                         "force-reload"})  # fmt: skip


def rule_shutdown(inv: Invocation, ctx: Context) -> None:
    args = set(inv.args)
    if _help_only(inv) or (inv.name == "shutdown" and args & {"-c", "--cancel", "-k"}):
        return
    ctx.hardline(
        "hardline.shutdown", f"shuts down or reboots the machine ({inv.name})", inv.segment
    )


def systemctl_verb(inv: Invocation) -> tuple[str, list[str]]:
    words = inv.args
    i = 0
    while i < len(words) and words[i].startswith("-"):
        i += 2 if words[i] in _SYSTEMCTL_VALUES else 1
    if i >= len(words):
        return "", []
    return words[i], [w for w in words[i + 1 :] if not w.startswith("-")]


def rule_systemctl(inv: Invocation, ctx: Context) -> None:
    verb, units = systemctl_verb(inv)
    bare = {u.removesuffix(".target") for u in units}
    if verb in _POWER_VERBS or (verb in ("start", "isolate", "restart") and bare & _POWER_TARGETS):
        ctx.hardline(
            "hardline.shutdown",
            f"shuts down or reboots the machine (systemctl {verb})",
            inv.segment,
        )
        return
    if verb in _STOP_VERBS or verb == "isolate" or verb in ("rescue", "emergency"):
        if any("herald" in u.lower() for u in units):
            ctx.approval(
                "dangerous.herald_gateway",
                f"stops or restarts Herald's own gateway service (systemctl {verb})",
                inv.segment,
            )
        else:
            ctx.approval(
                "dangerous.service_stop",
                f"stops or restarts system services (systemctl {verb})",
                inv.segment,
            )


def rule_init(inv: Invocation, ctx: Context) -> None:
    level = inv.args[0] if inv.args else ""
    if level in ("0", "6"):
        ctx.hardline(
            "hardline.shutdown",
            f"shuts down or reboots the machine ({inv.name} {level})",
            inv.segment,
        )
    elif level in ("1", "s", "S", "single"):
        ctx.approval("dangerous.service_stop", "switches to single-user mode", inv.segment)


def rule_kexec(inv: Invocation, ctx: Context) -> None:
    if set(inv.args) & {"-e", "--exec", "-f", "--force"}:
        ctx.hardline("hardline.shutdown", "reboots into another kernel (kexec)", inv.segment)


_DBUS_POWER_RE = re.compile(r"\b(?:PowerOff|Reboot|Halt|KExec)\b")


def rule_dbus_power(inv: Invocation, ctx: Context) -> None:
    if any(_DBUS_POWER_RE.search(a) for a in inv.args) and "login1" in " ".join(inv.args):
        ctx.hardline("hardline.shutdown", "asks logind to power off or reboot", inv.segment)


# -- permissions ----------------------------------------------------------------


_SYMBOLIC_CLAUSE_RE = re.compile(r"([ugoa]*)([-+=])([rwxXst]*|[ugo])")


def _mode_risks(mode: str) -> tuple[bool, bool]:
    """(world-writable, setuid/setgid) for a chmod mode (0777, a+w, u+s)."""
    if re.fullmatch(r"[0-7]{1,4}", mode):
        digits = mode.rjust(4, "0")
        return int(digits[3]) & 2 != 0, int(digits[0]) & 6 != 0
    world = setuid = False
    for clause in mode.split(","):
        for who, op, perms in _SYMBOLIC_CLAUSE_RE.findall(clause):
            if op == "-":
                continue
            if "w" in perms and ("o" in who or "a" in who):
                world = True
            if "s" in perms and (not who or "u" in who or "g" in who or "a" in who):
                setuid = True
    return world, setuid


_SYSTEM_PREFIXES = ("/etc", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/boot", "/opt",
                    "/var", "/root", "/private/etc", "/private/var", "/System", "/Library",
                    "/Applications")  # fmt: skip


def _system_file(path: str, ctx: Context) -> bool:
    p = canonical(ctx.resolve(path), ctx.env)
    if sensitive_target(p, ctx.env) is not None:
        return True
    if p.startswith(("/var/tmp", "/private/var/tmp")):
        return False
    return p == "/" or any(p == d or p.startswith(d + "/") for d in _SYSTEM_PREFIXES)


def rule_permissions(inv: Invocation, ctx: Context) -> None:
    args = inv.args
    recursive = any(
        a == "--recursive" or (a.startswith("-") and not a.startswith("--") and "R" in a)
        for a in args
    )
    operands = [a for a in args if not a.startswith("-")]
    mode = ""
    if inv.name != "setfacl" and not any(a.startswith("--reference") for a in args):
        mode, operands = (operands[0] if operands else ""), operands[1:]  # the mode or owner
    if recursive:
        broad = [a for a in operands if is_broad_tree(ctx.resolve(a), ctx.env)]
        if broad:
            ctx.approval(
                "dangerous.recursive_permissions",
                f"changes permissions or ownership recursively on a broad tree ({broad[0]})",
                inv.segment,
            )
    if inv.name != "chmod" or not mode:
        return
    world, setuid = _mode_risks(mode)
    system = [a for a in operands if _system_file(a, ctx)]
    if world and (recursive or system):
        where = "a whole tree" if recursive else system[0]
        ctx.approval(
            "dangerous.world_writable",
            f"makes {where} writable by every user (chmod {mode})",
            inv.segment,
        )
    elif setuid and system:
        ctx.approval(
            "dangerous.world_writable",
            f"makes {system[0]} run with its owner's rights (setuid/setgid, chmod {mode})",
            inv.segment,
        )
