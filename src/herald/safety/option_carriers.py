"""Options and variables whose value is run as a command.

Read-only tools turn into carriers through one option: ``man -P CMD``,
``rg --pre CMD``, ``sort --compress-program=CMD``, ``ag --pager CMD``,
``tar --to-command=CMD``, ``rsync -e CMD``, ``ssh -o ProxyCommand=CMD``,
``vim -c '!CMD'``, ``zip -TT CMD``, ``git -c core.pager=CMD`` (and the other
git settings that run programs, ``alias.x=!CMD`` included), or an
environment variable the tool executes (``GIT_PAGER``, ``LESSOPEN``,
``PROMPT_COMMAND`` …). `option_payloads` and `variable_payloads` return
those values so the checker can run every rule on them, the same as a
``bash -c`` payload.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from herald.safety.long_options import BY_COMMAND, expand_long


@dataclass(frozen=True)
class ExecOption:
    short: str = ""  # "-P": value attached (-Pcmd) or in the next word
    long: str = ""  # "--pager": --pager=cmd or --pager cmd (prefixes too)
    attached_only: bool = False  # the value is optional: only -Hcmd / --html=cmd
    value_prefix: str = ""  # --checkpoint-action=exec=CMD: only values with this prefix


_E = ExecOption
EXEC_OPTIONS: Mapping[str, tuple[ExecOption, ...]] = MappingProxyType({
    "man": (_E("-P", "--pager"), _E("-H", "--html", attached_only=True)),
    "rg": (_E("", "--pre"),),
    "ripgrep": (_E("", "--pre"),),
    "sort": (_E("", "--compress-program"),),
    "ag": (_E("", "--pager"),),
    "tar": (_E("", "--to-command"), _E("-I", "--use-compress-program"),
            _E("", "--checkpoint-action", value_prefix="exec="), _E("", "--rsh-command"),
            _E("-F", "--info-script"), _E("", "--new-volume-script")),
    "rsync": (_E("-e", "--rsh"),),
    "zip": (_E("-TT", "--unzip-command"),),
    "scp": (_E("-S"),),
})  # fmt: skip
_VIMS = frozenset({"vim", "vi", "nvim", "view", "ex", "vimdiff", "gvim", "rvim"})
_VIM_BANG_RE = re.compile(
    r"^\s*:?\s*(?:silent!?\s+)?(?:!|r(?:ead)?\s*!|w(?:rite)?\s*!|terminal\s)(.*)$"
)
_SSH_SETTING_RE = re.compile(r"\s*([A-Za-z]+)\s*(?:=\s*|\s+)(.*)$", re.S)
_SSH_EXEC_KEYS = frozenset({"proxycommand", "localcommand", "knownhostscommand", "remotecommand"})

# git settings whose value is a command (lower case; fnmatch-style "*").
_GIT_EXEC_KEYS = frozenset({"core.pager", "core.sshcommand", "core.editor", "core.fsmonitor",
                            "core.askpass", "core.gitproxy", "diff.external", "sequence.editor",
                            "gpg.program", "gpg.ssh.program", "gpg.x509.program",
                            "uploadpack.packobjectshook", "credential.helper",
                            "interactive.difffilter", "sendemail.sendmailcmd",
                            "sendemail.smtpserver", "web.browser", "instaweb.httpd"})  # fmt: skip
_GIT_EXEC_KEY_RE = re.compile(
    r"(?:alias|pager|credential\.[^=]*|filter\.[^=]*|diff\.[^=]*|merge\.[^=]*|browser\.[^=]*"
    r"|difftool\.[^=]*|mergetool\.[^=]*)\.(?:[^.=]*)$"
)
_GIT_EXEC_SUFFIXES = ("helper", "clean", "smudge", "process", "textconv", "command", "driver",
                      "cmd", "path")  # fmt: skip

# Environment variables a program runs as a command.
EXEC_VARIABLES = frozenset({"PAGER", "MANPAGER", "GIT_PAGER", "SYSTEMD_PAGER", "BAT_PAGER",
                            "GIT_SSH_COMMAND", "GIT_SSH", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR",
                            "EDITOR", "VISUAL", "LESSOPEN", "LESSCLOSE", "PROMPT_COMMAND",
                            "BASH_ENV", "ENV", "GIT_EXTERNAL_DIFF", "GIT_ASKPASS",
                            "SSH_ASKPASS", "SUDO_ASKPASS", "RSYNC_RSH", "BROWSER",
                            "GIT_PROXY_COMMAND", "MANROFFSEQ", "PERL5OPT", "NODE_OPTIONS",
                            "PS4", "LD_PRELOAD", "DYLD_INSERT_LIBRARIES"})  # fmt: skip
_NOT_CODE_VARIABLES = frozenset({"PERL5OPT", "NODE_OPTIONS", "LD_PRELOAD",
                                 "DYLD_INSERT_LIBRARIES"})  # fmt: skip


def _option_values(
    args: list[str], spec: ExecOption, long_table: Mapping[str, str] | None
) -> list[str]:
    values: list[str] = []
    for i, arg in enumerate(args):
        if arg == "--":
            break
        if spec.long and arg.startswith("--"):
            key, eq, value = expand_long(arg, long_table or {spec.long: spec.long}).partition("=")
            if key != spec.long:
                continue
            if eq:
                values.append(value)
            elif not spec.attached_only and i + 1 < len(args):
                values.append(args[i + 1])
        elif spec.short and arg.startswith(spec.short) and not arg.startswith("--"):
            rest = arg[len(spec.short) :]
            if rest:
                values.append(rest)
            elif not spec.attached_only and i + 1 < len(args):
                values.append(args[i + 1])
    if spec.value_prefix:
        values = [v[len(spec.value_prefix) :] for v in values if v.startswith(spec.value_prefix)]
    return values


def _git_config_payload(setting: str) -> str | None:
    key, eq, value = setting.partition("=")
    if not eq or not value.strip():
        return None
    key = key.strip().lower()
    if key.startswith("alias."):
        return value[1:] if value.startswith("!") else None
    if (
        key in _GIT_EXEC_KEYS
        or (_GIT_EXEC_KEY_RE.match(key) and key.rsplit(".", 1)[-1] in _GIT_EXEC_SUFFIXES)
        or key.startswith("pager.")
    ):
        return value[1:] if value.startswith("!") else value
    return None


def _git_payloads(args: list[str]) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(args) and args[i].startswith("-"):
        arg = args[i]
        if arg == "-c" and i + 1 < len(args):
            payload = _git_config_payload(args[i + 1])
            if payload:
                out.append(payload)
            i += 2
            continue
        if arg.startswith("-c") and len(arg) > 2:
            payload = _git_config_payload(arg[2:])
            if payload:
                out.append(payload)
        i += 2 if arg in ("-C", "--git-dir", "--work-tree", "--namespace") else 1
    return out


def _ssh_payloads(args: list[str]) -> list[str]:
    out: list[str] = []
    for i, arg in enumerate(args):
        if arg == "-o" and i + 1 < len(args):
            setting = args[i + 1]
        elif arg.startswith("-o") and len(arg) > 2:
            setting = arg[2:]
        else:
            continue
        m = _SSH_SETTING_RE.match(setting)
        if m and m.group(1).lower() in _SSH_EXEC_KEYS and m.group(2).strip():
            out.append(m.group(2))
    return out


def _vim_payloads(args: list[str]) -> list[str]:
    commands: list[str] = []
    for i, arg in enumerate(args):
        if arg in ("-c", "--cmd") and i + 1 < len(args):
            commands.append(args[i + 1])
        elif arg.startswith("+") and len(arg) > 1:
            commands.append(arg[1:])
    out: list[str] = []
    for command in commands:
        for part in command.split("|"):
            m = _VIM_BANG_RE.match(part)
            if m and m.group(1).strip():
                out.append(m.group(1))
    return out


def option_payloads(name: str, args: list[str]) -> list[str]:
    """Command strings that options of `name` would run."""
    if name == "git":
        return _git_payloads(args)
    if name == "ssh":
        return _ssh_payloads(args)
    if name in _VIMS:
        return _vim_payloads(args)
    specs = EXEC_OPTIONS.get(name)
    if not specs:
        return []
    table = BY_COMMAND.get(name)
    out: list[str] = []
    for spec in specs:
        out.extend(_option_values(args, spec, table))
    return [v for v in out if v.strip()]


def variable_payload(assignment: str) -> str | None:
    """The command an assignment like ``GIT_PAGER=cmd`` makes a program run."""
    name, eq, value = assignment.partition("=")
    if not eq or name not in EXEC_VARIABLES or name in _NOT_CODE_VARIABLES:
        return None
    if name in ("LESSOPEN", "LESSCLOSE"):
        value = value.lstrip("|-")
    value = value.replace("%s", "file")
    return value if value.strip() else None


def variable_payloads(assignments: Iterable[str]) -> list[str]:
    return [p for p in (variable_payload(a) for a in assignments) if p]
