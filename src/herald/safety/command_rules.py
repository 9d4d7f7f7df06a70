"""The rule table: which rules look at which command, and the catalogue of
every rule id with its level and a one-line summary.

Rules that name a command run only on an `Invocation`, i.e. a word in
command position after wrappers were peeled off (see
:mod:`herald.safety.carriers`); text inside quotes never reaches them except
as a carrier's payload. Position-less rules (redirect targets, fork bombs)
run on the parsed token stream, where quoted text is already masked.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from types import MappingProxyType

from herald.safety.carriers import check_carriers, script_output, unwrap
from herald.safety.control_plane import CONTROL_RULES
from herald.safety.host_executed import HOST_EXECUTED_RULE, rule_git_local
from herald.safety.invocation import Context, Invocation, git_subcommand
from herald.safety.long_options import BY_COMMAND, GIT_SUBCOMMANDS, expand_all
from herald.safety.option_carriers import variable_payloads
from herald.safety.rules_containers import (
    check_root_switchers,
    rule_container_host,
    rule_kube_host,
    rule_nsenter,
)
from herald.safety.rules_control import check_control_redirects, rule_control
from herald.safety.rules_dataloss import (
    check_emptying_redirects,
    rule_copy_move,
    rule_dd,
    rule_git_discard,
    rule_truncate,
)
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
from herald.safety.rules_network import (
    SOCKET_TOOLS,
    check_socket_redirects,
    rule_file_servers,
    rule_socket_tools,
)
from herald.safety.rules_persistence import (
    SWITCH_HEADS,
    WRITERS,
    check_git_environment,
    check_startup_redirects,
    check_timers,
    rule_autostart,
    rule_git_settings,
    rule_startup_writes,
)
from herald.safety.rules_processes import rule_kill_lookup, rule_pattern_kill
from herald.safety.rules_supply_chain import check_index_variables, rule_package_sources
from herald.safety.rules_workflow import (
    IPTABLES,
    SQL_CLIENTS,
    UPLOADERS,
    check_redirects,
    rule_containers,
    rule_crontab,
    rule_dropdb,
    rule_exfiltration,
    rule_firewall,
    rule_git,
    rule_herald,
    rule_infra,
    rule_initd_script,
    rule_service_tools,
    rule_sql,
    rule_writes,
)
from herald.safety.shell_ast import Script, SimpleCommand, Word
from herald.safety.static_eval import assumed_word, command_name

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
    "dangerous.recursive_delete": ("approval", "recursive delete anywhere else (rm -r, rsync --delete)"),
    "dangerous.delete": ("approval", "forced delete (rm -f), shred, deleting every file in a home"),
    "dangerous.find_delete": ("approval", "find -delete, find -exec rm, xargs rm"),
    "dangerous.recursive_permissions": ("approval", "recursive chmod/chown/chgrp of a broad tree"),
    "dangerous.git_destructive": ("approval", "git reset --hard, push --force/--delete, clean -f, branch -D, filter-branch, stash clear|drop"),
    "dangerous.pipe_to_shell": ("approval", "downloaded or decoded data run by a shell or interpreter"),
    "dangerous.inline_code": ("approval", "inline interpreter code (python -c, perl -e, node -e, cmd /c, powershell -Command, heredoc into an interpreter)"),
    "dangerous.opaque_code": ("approval", "eval / sh -c of a variable whose value is unknown"),
    "dangerous.sensitive_write": ("approval", "writing or deleting ~/.ssh, shell rc files, /etc, credential files, .env files, Herald's own home"),
    "dangerous.exfiltration": ("approval", "uploading secret files or the environment (curl -d @.env, scp ~/.ssh/id_rsa host:)"),
    "dangerous.sql_destructive": ("approval", "SQL DROP / TRUNCATE / DELETE without WHERE, FLUSHALL, dropdb"),
    "dangerous.herald_gateway": ("approval", "stopping or killing Herald's own gateway"),
    "dangerous.kill_process_group": ("approval", "signalling a process group or every process of a user"),
    "dangerous.kill_init": ("approval", "signalling PID 1"),
    "dangerous.service_stop": ("approval", "stopping, restarting, disabling or masking services; single-user mode"),
    "dangerous.container_prune": ("approval", "docker/podman prune, rm -f, volume rm, compose down -v"),
    "dangerous.infra_destroy": ("approval", "terraform/pulumi destroy, kubectl delete, helm uninstall, cloud delete"),
    "dangerous.partition_table": ("approval", "fdisk/parted/sgdisk changes to a disk's partition table"),
    "dangerous.crontab": ("approval", "crontab -r, installing or editing a crontab"),
    "dangerous.sudo_stdin": ("approval", "sudo -S/--stdin/-A: root with a password no human types"),
    "dangerous.dynamic_command": ("approval", "a command name that comes from a variable or substitution whose value is unknown"),
    "dangerous.world_writable": ("approval", "chmod making system files world-writable or setuid, chmod -R 777"),
    "dangerous.firewall": ("approval", "flushing or disabling the firewall (iptables -F, nft flush ruleset, ufw disable)"),
    HOST_EXECUTED_RULE: ("approval", "writing a project file the host runs later (.git/hooks, .git/config, .envrc, .herald/, .vscode/, .idea/ …) or git config keys that run programs"),
    **CONTROL_RULES,  # control.*: Herald's control plane (herald.safety.control_plane)
    "dangerous.remote_shell": ("approval", "a shell or program wired to a network socket (/dev/tcp redirects, socat EXEC:, nc -e, sh -i | nc)"),
    "dangerous.exposed_files": ("approval", "a file server on every interface serving a home, / or credentials (python -m http.server in ~)"),
    "dangerous.persistence": ("approval", "code set to run later on its own: git settings git executes, enabled services and agents, timers, start-up files"),
    "dangerous.system_write": ("approval", "writing into system locations outside /etc (/usr, /bin, /lib, /boot, /var, /private/var, /Library, /sys)"),
    "dangerous.overwrite": ("approval", "destroying data without rm: truncate, : > file, dd of=, cp /dev/null outside the project, mv onto /dev/null, xargs mv/cp onto one name"),
    "dangerous.container_host": ("approval", "containers that are root on the host (--privileged, host mounts of / or ~, docker.sock, --pid=host), nsenter, chroot"),
    "dangerous.untrusted_package": ("approval", "package installs from non-default indexes, URLs, VCS or a download (pip -i http://…, npm install <url>)"),
    "dangerous.kill_broad": ("approval", "killall, pkill -9 or pkill -f of patterns matching session or system processes or nearly everything"),
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
# git config and history loss live apart from rule_git (herald.safety.host_executed).
RULES_BY_NAME["git"] = (*RULES_BY_NAME["git"], rule_git_local)
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
    "helm",
):
    RULES_BY_NAME[_name] = (rule_infra,)
for _name in (*IPTABLES, "nft", "ufw", "pfctl", "firewall-cmd", "netsh", "netsh.exe"):
    RULES_BY_NAME[_name] = (rule_firewall,)


def _add(names: tuple[str, ...] | frozenset[str], *rules: RuleFn) -> None:
    for name in names:
        RULES_BY_NAME[name] = (*RULES_BY_NAME.get(name, ()), *rules)


_PYTHONS = ("python", "python2", "python3", *(f"python3.{m}" for m in range(6, 16)), "pypy",
            "pypy3", "py")  # fmt: skip
_add(SOCKET_TOOLS, rule_socket_tools)
_add((*_PYTHONS, "php", "busybox", "httpd", "npx", "http-server", "serve"), rule_file_servers)
_add(("docker", "podman", "nerdctl", "finch"), rule_container_host)
_add(("nsenter",), rule_nsenter)
_add(("kubectl", "oc"), rule_kube_host)
_add((*_PYTHONS, "pip", "pip3", *(f"pip3.{m}" for m in range(6, 16)), "uv", "pipx", "easy_install",
      "npm", "pnpm", "yarn", "bun", "cnpm", "gem", "cargo", "brew", "conda", "mamba",
      "micromamba", "uvx", "npx", "bunx", "poetry", "pdm", "rye", "hatch"),
     rule_package_sources)  # fmt: skip
_add(("git",), rule_git_settings, rule_git_discard)
_add(("systemctl", "launchctl", "loginctl", "defaults", "sfltool", "osascript", "schtasks",
      "schtasks.exe", "reg", "reg.exe", "update-rc.d", "chkconfig", "rc-update"), rule_autostart)  # fmt: skip
_add(WRITERS, rule_startup_writes)
_add(("truncate",), rule_truncate)
_add(("dd",), rule_dd)
_add(("cp", "mv"), rule_copy_move)
_add(("pkill", "killall"), rule_pattern_kill)
_add(("kill",), rule_kill_lookup)


_DECLARERS = frozenset({"export", "declare", "local", "readonly", "typeset", "env"})
_INDEX_SETTERS = _DECLARERS | {"set", "setenv"}


def _with_texts(inv: Invocation, texts: list[str]) -> Invocation:
    words = [inv.words[0]] + [
        w if w.text == t else dataclasses.replace(w, text=t)
        for w, t in zip(inv.words[1:], texts, strict=True)
    ]
    return dataclasses.replace(inv, words=words)


def expand_long_options(inv: Invocation) -> Invocation:
    """The invocation with abbreviated long options spelled out
    (``git push --forc`` reads ``--force``), see :mod:`.long_options`."""
    name, args = inv.name, inv.args
    if name == "git":
        found = git_subcommand(args)
        table = GIT_SUBCOMMANDS.get(found[0]) if found is not None else None
        if found is None or table is None:
            return inv
        rest = found[1]
        return _with_texts(inv, args[: len(args) - len(rest)] + expand_all(rest, table))
    table = BY_COMMAND.get(name)
    if table is None:
        return inv
    return _with_texts(inv, expand_all(args, table))


def check_invocation(inv: Invocation, ctx: Context) -> None:
    """Every rule that applies to one command (wrappers already removed)."""
    inv = expand_long_options(inv)
    name = inv.name
    for rule in RULES_BY_NAME.get(name, ()):
        rule(inv, ctx)
    if is_mkfs(name):
        rule_mkfs(inv, ctx)
    if inv.words[0].text.startswith(("/etc/init.d/", "/etc/rc.d/")):
        rule_initd_script(inv, ctx)
    rule_writes(inv, ctx)
    rule_control(inv, ctx)
    check_carriers(inv, ctx)


def _check_assignments(cmd: SimpleCommand, ctx: Context) -> None:
    """``GIT_PAGER=cmd git log``, ``export PROMPT_COMMAND=cmd``: the value is
    a command some program will run."""
    texts = [w.text for w in cmd.assignments]
    if cmd.words and cmd.words[0].text in _DECLARERS:
        texts.extend(w.text for w in cmd.words[1:])
    for payload in variable_payloads(texts):
        ctx.code(payload, cmd.source)


def _check_dynamic_head(inv: Invocation, ctx: Context) -> None:
    """A command name from an expansion: judged as what it expands to when
    its variables are unset (``${X:-rm}`` is at least ``rm``), and approval
    because the real value is unknown."""
    head = inv.words[0]
    for sub in head.subs:
        kind = script_output(sub).kind
        if kind in ("download", "decoded"):
            what = "downloaded" if kind == "download" else "decoded"
            ctx.approval("dangerous.pipe_to_shell", f"runs {what} text as a command", inv.segment)
            break
    if not head.dynamic or head.text.startswith("(("):
        return
    if head.subs and len(inv.words) == 1:
        return  # `$(tool init)` / eval "$(…)": output run as a script, judged by its source
    assumed = assumed_word(head.raw, ctx.env)
    if assumed:
        pieces = assumed.split()
        words = [Word(text=p, raw=head.raw) for p in pieces] + inv.words[1:]
        check_invocation(dataclasses.replace(inv, words=words), ctx)
    ctx.approval(
        "dangerous.dynamic_command",
        f"runs a command whose name comes from an expansion with an unknown value ({head.raw})",
        inv.segment,
    )


def _check_effects(cmd: SimpleCommand, ctx: Context) -> None:
    """The effect rules that read redirects and assignments (issue 28)."""
    if cmd.redirects:
        check_socket_redirects(cmd, ctx)
        check_startup_redirects(cmd, ctx)
        check_emptying_redirects(cmd, ctx)
    if cmd.assignments or (cmd.words and cmd.words[0].text in _INDEX_SETTERS):
        check_index_variables(cmd, ctx)
        check_git_environment(cmd, ctx)


def check_simple_command(cmd: SimpleCommand, ctx: Context) -> None:
    ctx.segments.append(cmd.source)
    check_redirects(cmd, ctx)
    check_control_redirects(cmd, ctx)
    if cmd.redirects or cmd.assignments or (cmd.words and cmd.words[0].text in _INDEX_SETTERS):
        _check_effects(cmd, ctx)
    _check_assignments(cmd, ctx)
    inv = unwrap(cmd, ctx)
    # wrappers were peeled off: chroot and systemd-run timers are judged on the raw words
    peeled = inv is None or inv.words is not cmd.words
    if peeled and cmd.words and command_name(cmd.words[0].text) in SWITCH_HEADS:
        check_root_switchers(cmd, ctx)
        check_timers(cmd, ctx)
    if inv is None:
        return
    _check_dynamic_head(inv, ctx)
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
