"""The rule table: which rules look at which command, and the catalogue of
every rule id with its level and a one-line summary.

Rules that name a command run only on an `Invocation`, i.e. a word in
command position after wrappers were peeled off (see
:mod:`herald.safety.carriers`); text inside quotes never reaches them except
as a carrier's payload. Position-less rules (redirect targets, fork bombs)
run on the parsed token stream, where quoted text is already masked.
"""

from __future__ import annotations

from collections.abc import Callable
from types import MappingProxyType

from herald.safety.carriers import check_carriers, script_output, unwrap
from herald.safety.invocation import Context, Invocation
from herald.safety.rules_destructive import (
    is_mkfs,
    rule_cd,
    rule_dbus_power,
    rule_device_tools,
    rule_diskutil,
    rule_find,
    rule_init,
    rule_kexec,
    rule_kill,
    rule_killall5,
    rule_mkfs,
    rule_partition,
    rule_permissions,
    rule_pkill,
    rule_rm,
    rule_rsync,
    rule_shred,
    rule_shutdown,
    rule_systemctl,
    rule_wipefs,
)
from herald.safety.rules_workflow import (
    SQL_CLIENTS,
    UPLOADERS,
    check_redirects,
    rule_containers,
    rule_crontab,
    rule_dropdb,
    rule_exfiltration,
    rule_git,
    rule_herald,
    rule_infra,
    rule_initd_script,
    rule_service_tools,
    rule_sql,
    rule_writes,
)
from herald.safety.shell_ast import Script, SimpleCommand

RuleFn = Callable[[Invocation, Context], None]

# Every rule id, its level and what it catches. Ids are stable: callers,
# config and logs refer to them.
RULE_CATALOGUE: MappingProxyType[str, tuple[str, str]] = MappingProxyType({
    "hardline.delete_root": ("hardline", "recursive delete of / in any spelling (/, /*, //, /usr/..)"),
    "hardline.delete_system_dir": ("hardline", "recursive delete of a system directory (/usr, /etc, /var/lib …) or of everything in it"),
    "hardline.delete_home": ("hardline", "recursive delete of a home directory (~, $HOME, /home/x, ~/*)"),
    "hardline.mkfs": ("hardline", "formatting or erasing a filesystem (mkfs*, wipefs -a, diskutil erase*)"),
    "hardline.block_device_write": ("hardline", "dd, redirects, tee, cp, shred … onto a raw block device"),
    "hardline.fork_bomb": ("hardline", "a function or program that spawns itself endlessly"),
    "hardline.kill_all": ("hardline", "signalling every process (kill … -1, killall5)"),
    "hardline.shutdown": ("hardline", "shutdown, reboot, halt, poweroff, init 0|6, systemctl poweroff|reboot|halt|kexec, sysrq"),
    "hardline.parser_limits": ("hardline", "a command too large or deeply nested to check; save it as a script"),
    "hardline.sudo_stdin": ("hardline", "sudo -S/--stdin when Herald has no sudo password configured"),
    "dangerous.recursive_delete": ("approval", "recursive delete anywhere else (rm -r, rsync --delete)"),
    "dangerous.delete": ("approval", "forced delete (rm -f), shred, deleting every file in a home"),
    "dangerous.find_delete": ("approval", "find -delete, find -exec rm, xargs rm"),
    "dangerous.recursive_permissions": ("approval", "recursive chmod/chown/chgrp of a broad tree"),
    "dangerous.git_destructive": ("approval", "git reset --hard, push --force/--delete, clean -f, branch -D, filter-branch, stash clear|drop"),
    "dangerous.pipe_to_shell": ("approval", "downloaded or decoded data run by a shell or interpreter"),
    "dangerous.inline_code": ("approval", "inline interpreter code (python -c, perl -e, node -e, heredoc into an interpreter)"),
    "dangerous.opaque_code": ("approval", "eval / sh -c of a variable whose value is unknown"),
    "dangerous.sensitive_write": ("approval", "writing or deleting ~/.ssh, shell rc files, /etc, credential files, .env files, Herald's own home"),
    "dangerous.exfiltration": ("approval", "uploading secret files or the environment (curl -d @.env, scp ~/.ssh/id_rsa host:)"),
    "dangerous.sql_destructive": ("approval", "SQL DROP / TRUNCATE / DELETE without WHERE, FLUSHALL, dropdb"),
    "dangerous.herald_gateway": ("approval", "stopping or killing Herald's own gateway"),
    "dangerous.kill_process_group": ("approval", "signalling a process group or every process of a user"),
    "dangerous.kill_init": ("approval", "signalling PID 1"),
    "dangerous.service_stop": ("approval", "stopping, disabling or masking services; single-user mode"),
    "dangerous.container_prune": ("approval", "docker/podman prune, volume rm, compose down -v"),
    "dangerous.infra_destroy": ("approval", "terraform/pulumi destroy, kubectl delete ns/--all, cloud delete"),
    "dangerous.partition_table": ("approval", "fdisk/parted/sgdisk changes to a disk's partition table"),
    "dangerous.crontab": ("approval", "crontab -r, installing or editing a crontab"),
})  # fmt: skip

_SHUTDOWN = (rule_shutdown,)
_PARTITION = (rule_partition,)
_SERVICES = (rule_service_tools,)
_CONTAINERS = (rule_containers,)

RULES_BY_NAME: dict[str, tuple[RuleFn, ...]] = {
    "rm": (rule_rm,),
    "cd": (rule_cd,),
    "pushd": (rule_cd,),
    "shred": (rule_shred,),
    "srm": (rule_shred,),
    "wipe": (rule_shred,),
    "find": (rule_find,),
    "rsync": (rule_rsync, rule_exfiltration),
    "wipefs": (rule_wipefs,),
    "diskutil": (rule_diskutil,),
    "blkdiscard": (rule_device_tools,),
    "mkswap": (rule_device_tools,),
    "nvme": (rule_device_tools,),
    "hdparm": (rule_device_tools,),
    "fdisk": _PARTITION,
    "sfdisk": _PARTITION,
    "cfdisk": _PARTITION,
    "parted": _PARTITION,
    "gdisk": _PARTITION,
    "sgdisk": _PARTITION,
    "kill": (rule_kill,),
    "pkill": (rule_pkill,),
    "killall": (rule_pkill,),
    "killall5": (rule_killall5,),
    "shutdown": _SHUTDOWN,
    "reboot": _SHUTDOWN,
    "halt": _SHUTDOWN,
    "poweroff": _SHUTDOWN,
    "openrc-shutdown": _SHUTDOWN,
    "systemctl": (rule_systemctl,),
    "init": (rule_init,),
    "telinit": (rule_init,),
    "kexec": (rule_kexec,),
    "dbus-send": (rule_dbus_power,),
    "busctl": (rule_dbus_power,),
    "gdbus": (rule_dbus_power,),
    "chmod": (rule_permissions,),
    "chown": (rule_permissions,),
    "chgrp": (rule_permissions,),
    "setfacl": (rule_permissions,),
    "git": (rule_git,),
    "dropdb": (rule_dropdb,),
    "mysqladmin": (rule_dropdb,),
    "service": _SERVICES,
    "rc-service": _SERVICES,
    "launchctl": _SERVICES,
    "sv": _SERVICES,
    "supervisorctl": _SERVICES,
    "initctl": _SERVICES,
    "herald": (rule_herald,),
    "docker": _CONTAINERS,
    "podman": _CONTAINERS,
    "nerdctl": _CONTAINERS,
    "docker-compose": _CONTAINERS,
    "podman-compose": _CONTAINERS,
    "crontab": (rule_crontab,),
}
for _name in SQL_CLIENTS:
    RULES_BY_NAME[_name] = (*RULES_BY_NAME.get(_name, ()), rule_sql)
for _name in UPLOADERS:
    RULES_BY_NAME.setdefault(_name, (rule_exfiltration,))
for _name in (
    "terraform",
    "tofu",
    "terragrunt",
    "pulumi",
    "kubectl",
    "oc",
    "aws",
    "gcloud",
    "az",
    "gsutil",
):
    RULES_BY_NAME[_name] = (rule_infra,)


def check_invocation(inv: Invocation, ctx: Context) -> None:
    """Every rule that applies to one command (wrappers already removed)."""
    name = inv.name
    for rule in RULES_BY_NAME.get(name, ()):
        rule(inv, ctx)
    if is_mkfs(name):
        rule_mkfs(inv, ctx)
    if inv.words[0].text.startswith(("/etc/init.d/", "/etc/rc.d/")):
        rule_initd_script(inv, ctx)
    rule_writes(inv, ctx)
    check_carriers(inv, ctx)


def check_simple_command(cmd: SimpleCommand, ctx: Context) -> None:
    ctx.segments.append(cmd.source)
    check_redirects(cmd, ctx)
    inv = unwrap(cmd, ctx)
    if inv is None:
        return
    head = inv.words[0]
    if head.dynamic:
        for sub in head.subs:
            kind = script_output(sub).kind
            if kind in ("download", "decoded"):
                what = "downloaded" if kind == "download" else "decoded"
                ctx.approval(
                    "dangerous.pipe_to_shell", f"runs {what} text as a command", inv.segment
                )
                break
    if inv.words is not cmd.words:
        ctx.segments.append(" ".join(w.text for w in inv.words))
    check_invocation(inv, ctx)


def check_script(script: Script, ctx: Context) -> None:
    pending = [script]
    while pending:
        current = pending.pop()
        if current.fork_bomb:
            ctx.hardline("hardline.fork_bomb", "is a fork bomb (spawns processes endlessly)", "")
            break
        pending.extend(current.subscripts)
    for cmd in script.walk():
        check_simple_command(cmd, ctx)
