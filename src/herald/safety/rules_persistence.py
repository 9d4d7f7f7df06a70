"""Rules for commands that make something run later without being asked:
git settings whose value git executes (hooks path, ssh command, pager,
fsmonitor, ``!`` aliases …), services and agents enabled to start on their
own (``systemctl enable``, ``launchctl load``, ``loginctl enable-linger``,
timers), login hooks, and files every shell, editor, interpreter or desktop
session reads at start-up. Also writes into system locations outside
``/etc`` (``/usr``, ``/bin``, ``/Library``, ``/private/var`` …), which
replace what every later command runs.

The effect judged: code planted now that runs in a later session, with no
command in the transcript to show it.
"""

from __future__ import annotations

import posixpath
import re

from herald.safety.effects import resolved, system_location
from herald.safety.invocation import Context, Invocation
from herald.safety.long_options import expand_long
from herald.safety.paths import sensitive_target
from herald.safety.rules_workflow import is_file_write, write_targets
from herald.safety.shell_ast import SimpleCommand
from herald.safety.static_eval import command_name

PERSISTENCE = "dangerous.persistence"
SYSTEM_WRITE = "dangerous.system_write"

# git config keys (lower-cased section and name) whose value git runs as a
# program or that redirect where code comes from.
_GIT_EXEC_KEYS = frozenset({"core.hookspath", "core.sshcommand", "core.pager", "core.fsmonitor",
                            "core.editor", "core.askpass", "core.gitproxy", "sequence.editor",
                            "diff.external", "gpg.program", "gpg.ssh.program",
                            "gpg.x509.program", "credential.helper", "init.templatedir",
                            "uploadpack.packobjectshook", "include.path", "safe.directory",
                            "sendemail.smtpserver", "web.browser", "core.worktree",
                            "protocol.ext.allow", "protocol.allow"})  # fmt: skip
_GIT_EXEC_SUFFIXES = (".textconv", ".command", ".driver", ".clean", ".smudge", ".process",
                      ".cmd", ".path", ".helper", ".program", ".insteadof", ".pushinsteadof",
                      ".uploadpack", ".receivepack", ".proxy", ".sshcommand")  # fmt: skip
# Values that are plainly the usual tool, not planted code.
_USUAL_VALUES = re.compile(
    r"(?:vim?|nvim|nano|emacs(?:client)?(?: -t| -nw)?|code(?: -w| --wait)?|subl(?: -n)?(?: -w)?"
    r"|mate -w|hx|micro|less(?: -[A-Za-z]+)*|more|cat|delta(?: [-\w=]+)*|diff-so-fancy"
    r"|bat(?: [-\w=]+)*|store|cache(?: --timeout=?\d+)?|osxkeychain|manager(?:-core)?|libsecret"
    r"|gh auth git-credential|/usr/bin/(?:vim|nano|less)|true|false)"
)
_GIT_CONFIG_VALUE_FLAGS = frozenset({"--file", "-f", "--blob", "--type", "--default",
                                     "--comment", "--value"})  # fmt: skip
_GIT_CONFIG_LONG = {o: o for o in ("--global", "--system", "--local", "--worktree", "--file",
                                   "--blob", "--get", "--get-all", "--get-regexp", "--get-urlmatch",
                                   "--replace-all", "--add", "--unset", "--unset-all",
                                   "--rename-section", "--remove-section", "--list", "--edit",
                                   "--type", "--bool", "--int", "--bool-or-int", "--path",
                                   "--expiry-date", "--null", "--name-only", "--includes",
                                   "--no-includes", "--show-origin", "--show-scope",
                                   "--get-color", "--get-colorbool", "--default", "--comment",
                                   "--value", "--fixed-value", "--all", "--help")}  # fmt: skip
_GIT_READ_FLAGS = frozenset({"--get", "--get-all", "--get-regexp", "--get-urlmatch", "--unset",
                             "--unset-all", "--list", "-l", "--remove-section", "--get-color",
                             "--get-colorbool", "--show-origin", "--name-only"})  # fmt: skip


def _dangerous_git_setting(key: str, value: str) -> bool:
    k = key.lower()
    if k.startswith("alias."):
        return value.lstrip().startswith("!")
    if k.startswith("includeif.") or k.startswith("pager.") or k.startswith("filter."):
        return True
    if k not in _GIT_EXEC_KEYS and not k.endswith(_GIT_EXEC_SUFFIXES):
        return False
    if k == "safe.directory":
        return value.strip() == "*"
    if k in ("core.editor", "sequence.editor", "core.pager", "credential.helper"):
        return _USUAL_VALUES.fullmatch(value.strip()) is None
    return True


def _git_config_pairs(args: list[str]) -> list[tuple[str, str]]:
    """(key, value) pairs a `git config` invocation sets."""
    if args[:1] in (["set"],):
        args = args[1:]
    elif args[:1] in (["get"], ["list"], ["unset"], ["rename-section"], ["remove-section"],
                      ["edit"]):  # fmt: skip
        return []
    positional: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg.startswith("-"):
            flag = expand_long(arg.split("=", 1)[0], _GIT_CONFIG_LONG)
            if flag in _GIT_READ_FLAGS:
                return []
            if flag in _GIT_CONFIG_VALUE_FLAGS and "=" not in arg:
                i += 1
        else:
            positional.append(arg)
        i += 1
    if len(positional) >= 2:
        return [(positional[0], positional[1])]
    return []


def rule_git_settings(inv: Invocation, ctx: Context) -> None:
    """`git config KEY VALUE` in any scope, and `git -c KEY=VALUE …`."""
    args = inv.args
    pairs: list[tuple[str, str]] = []
    i = 0
    while i < len(args) and args[i].startswith("-"):
        if args[i] in ("-c", "--config-env") and i + 1 < len(args):
            key, _, value = args[i + 1].partition("=")
            pairs.append((key, value or "!"))
            i += 2
            continue
        i += 2 if args[i] in ("-C", "--git-dir", "--work-tree", "--namespace") else 1
    if i < len(args) and args[i] == "config":
        pairs.extend(_git_config_pairs(args[i + 1 :]))
    for key, value in pairs:
        if _dangerous_git_setting(key, value):
            ctx.approval(
                PERSISTENCE,
                f"sets the git option {key}, which makes git run another program ({value[:60]})",
                inv.segment,
            )
            return


def check_git_environment(cmd: SimpleCommand, ctx: Context) -> None:
    """``GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0=… git log``: the same
    settings passed through the environment (also after ``env``)."""
    keys: dict[str, str] = {}
    values: dict[str, str] = {}
    words = [*cmd.assignments, *cmd.words[:24]]
    for word in words:
        name, eq, value = word.text.partition("=")
        if not eq or not name.startswith("GIT_CONFIG_"):
            continue
        if name.startswith("GIT_CONFIG_KEY_"):
            keys[name[len("GIT_CONFIG_KEY_") :]] = value
        elif name.startswith("GIT_CONFIG_VALUE_"):
            values[name[len("GIT_CONFIG_VALUE_") :]] = value
        elif name == "GIT_CONFIG_PARAMETERS":
            for key, val in re.findall(r"'([^'=]{1,200})'\s*=\s*'([^']{0,400})'", value):
                keys[key], values[key] = key, val
    for index, key in keys.items():
        if _dangerous_git_setting(key, values.get(index, "!")):
            ctx.approval(
                PERSISTENCE,
                f"sets the git option {key} through the environment, which makes git run "
                "another program",
                cmd.source,
            )
            return


# -- services, agents, hooks ------------------------------------------------------

_SYSTEMCTL_ENABLE = frozenset({"enable", "reenable", "link", "add-wants", "add-requires",
                               "preset", "preset-all", "set-default", "edit"})  # fmt: skip
_SYSTEMCTL_LONG = {o: o for o in ("--user", "--system", "--now", "--global", "--runtime",
                                  "--force", "--no-reload", "--quiet", "--no-block", "--type",
                                  "--state", "--all", "--full", "--root", "--host",
                                  "--machine", "--no-pager", "--no-ask-password", "--help",
                                  "--version", "--signal", "--kill-whom", "--failed",
                                  "--reverse", "--after", "--before", "--lines", "--output",
                                  "--dry-run", "--plain", "--property", "--value", "--show-types",
                                  "--job-mode", "--wait", "--legend", "--preset-mode",
                                  "--mkdir", "--marked", "--read-only", "--drop-in",
                                  "--what", "--image", "--when", "--check-inhibitors",
                                  "--timestamp", "--firmware-setup", "--boot-loader-menu",
                                  "--boot-loader-entry", "--reboot-argument", "--message",
                                  "--recursive", "--with-dependencies", "--ignore-inhibitors")}  # fmt: skip
_LAUNCHCTL_LOAD = frozenset({"load", "bootstrap", "enable", "submit", "asuser", "kickstart"})


def rule_autostart(inv: Invocation, ctx: Context) -> None:
    name, args = inv.name, inv.args
    what = ""
    if name == "systemctl":
        expanded = [expand_long(a, _SYSTEMCTL_LONG) if a.startswith("--") else a for a in args]
        verbs = [a for a in expanded if not a.startswith("-")]
        if verbs[:1] and verbs[0] in _SYSTEMCTL_ENABLE:
            what = f"makes a service start on its own from now on (systemctl {verbs[0]})"
        elif "--now" in expanded and verbs[:1] == ["enable"]:
            what = "enables and starts a service (systemctl enable --now)"
    elif name == "launchctl":
        verbs = [a for a in args if not a.startswith("-")]
        if verbs[:1] and verbs[0] in _LAUNCHCTL_LOAD:
            what = f"registers a launch agent or daemon (launchctl {verbs[0]})"
    elif name == "loginctl" and "enable-linger" in args:
        what = "keeps the user's services running after logout (loginctl enable-linger)"
    elif (
        name == "defaults"
        and args[:1] == ["write"]
        and any(
            a in ("LoginHook", "LogoutHook", "AutoLaunchedApplicationDictionary", "LaunchEvents")
            or a.startswith("com.apple.loginitems")
            for a in args
        )
    ):
        what = "installs a macOS login hook or login item (defaults write)"
    elif name in ("sfltool", "osascript") and (
        args[:1] == ["add-item"] or any("login item" in a.lower() for a in args)
    ):
        what = "adds a macOS login item"
    elif name in ("schtasks", "schtasks.exe") and any(a.lower() == "/create" for a in args):
        what = "creates a Windows scheduled task (schtasks /create)"
    elif (
        name in ("reg", "reg.exe")
        and args[:1]
        and args[0].lower() == "add"
        and any(
            re.search(r"\\(?:Run|RunOnce|Winlogon|Image File Execution Options)\b", a, re.I)
            for a in args
        )
    ):
        what = "adds a Windows autorun registry entry (reg add …\\Run)"
    elif name == "update-rc.d" and "remove" not in args:
        what = "makes an init script start at boot (update-rc.d)"
    elif name == "chkconfig" and ("on" in args or "--add" in args):
        what = "makes a service start at boot (chkconfig)"
    elif name == "rc-update" and args[:1] == ["add"]:
        what = "makes a service start at boot (rc-update add)"
    if what:
        ctx.approval(PERSISTENCE, what, inv.segment)


_RUN_PREFIXES = frozenset({"sudo", "doas", "run0", "env", "nohup", "nice", "exec", "command"})
_TIMER_FLAGS = ("--on-calendar", "--on-boot", "--on-startup", "--on-unit-active",
                "--on-unit-inactive", "--on-active", "--on-clock-change", "--on-timezone-change",
                "--timer-property", "--path-property", "--socket-property")  # fmt: skip


def check_timers(cmd: SimpleCommand, ctx: Context) -> None:
    """``systemd-run --on-calendar … cmd`` is peeled off as a wrapper, so its
    scheduling flags are read on the raw words: a timer runs the command
    again later, on its own."""
    if not cmd.words:
        return
    first = cmd.words[0].text  # cheap test first: this runs on every command
    if not first.endswith("systemd-run") and command_name(first) not in _RUN_PREFIXES:
        return
    if not any(w.text.endswith("systemd-run") for w in cmd.words[:4]):
        return
    if any(w.text.startswith(_TIMER_FLAGS) for w in cmd.words[:12]):
        ctx.approval(
            PERSISTENCE, "schedules a command to run later on a timer (systemd-run)", cmd.source
        )


# -- start-up files -----------------------------------------------------------------

# Home-relative files and folders something reads and acts on at start-up,
# beyond the shell rc files and autostart folders `sensitive_target` covers.
_HOME_STARTUP = (".gitconfig", ".config/git/config", ".config/environment.d", ".pam_environment",
                 ".config/plasma-workspace", ".config/upstart", ".kde/Autostart",
                 ".kde4/Autostart", ".config/autostart-scripts", ".config/openbox/autostart",
                 ".config/i3/config", ".config/sway/config", ".config/hypr", ".config/lxsession",
                 ".vimrc", ".exrc", ".gvimrc", ".vim/plugin", ".config/nvim", ".tmux.conf",
                 ".config/tmux", ".screenrc", ".pythonrc", ".pythonrc.py", ".pythonstartup",
                 ".ipython", ".config/ipython", ".Rprofile", ".irbrc", ".pryrc", ".gemrc",
                 ".curlrc", ".wgetrc", ".yarnrc", ".yarnrc.yml", ".bunfig.toml", ".npmrc",
                 ".emacs", ".emacs.d/init.el", ".config/emacs", ".xsession", ".xsessionrc",
                 ".Xresources", ".config/fish", ".config/nushell", ".config/powershell",
                 ".inputrc", ".local/share/applications", ".mozilla/firefox",
                 "Library/LaunchAgents", "Library/Application Support/com.apple.backgroundtaskmanagementagent",
                 "Library/Preferences/com.apple.loginitems.plist")  # fmt: skip
# Python runs these from site-packages at every interpreter start.
_PY_STARTUP_RE = re.compile(r"(?:^|/)(?:sitecustomize\.py|usercustomize\.py|[^/]+\.pth)$")
_HOME_RE = re.compile(r"^(?:/home/[^/]+|/Users/[^/]+|/root|/var/root|/private/var/root)/(.+)$")


def startup_file(path: str, ctx: Context) -> str:
    """What start-up mechanism writing path plants code in, or ''."""
    p = resolved(path, ctx)
    if _PY_STARTUP_RE.search(p) and ("site-packages" in p or "dist-packages" in p
                                     or p.endswith(("sitecustomize.py", "usercustomize.py"))):  # fmt: skip
        return "a Python start-up hook (runs in every Python process)"
    match = _HOME_RE.match(p)
    if match:
        rel = match.group(1)
        for prefix in _HOME_STARTUP:
            if rel == prefix or rel.startswith(prefix + "/"):
                return f"a start-up file (~/{prefix})"
    return ""


def _judge(path: str, segment: str, ctx: Context) -> None:
    if sensitive_target(resolved(path, ctx), ctx.env):
        return  # `dangerous.sensitive_write` already asks about it
    what = startup_file(path, ctx)
    if what:
        ctx.approval(PERSISTENCE, f"writes {what}: code that runs in later sessions", segment)
        return
    root = system_location(path, ctx)
    if root:
        shown = posixpath.normpath(resolved(path, ctx))
        ctx.approval(SYSTEM_WRITE, f"writes into the system directory {root} ({shown})", segment)


# Commands `write_targets` knows how to read (the rest write nothing it can see).
# Commands `write_targets` knows how to read (dispatched by name, see
# `herald.safety.command_rules`; the rest write nothing it can see).
WRITERS = ("cp", "mv", "install", "ln", "rsync", "scp", "rcp", "tee", "sponge", "sudoedit",
           "truncate", "dd", "sed", "curl", "wget", "ssh-keygen", "perl", "perl5", "ruby")  # fmt: skip
SWITCH_HEADS = frozenset({"chroot", "systemd-run", *_RUN_PREFIXES, "pkexec", "time", "setsid",
                          "timeout", "unshare"})  # fmt: skip


def rule_startup_writes(inv: Invocation, ctx: Context) -> None:
    writes, _ = write_targets(inv)
    for path in writes:
        _judge(path, inv.segment, ctx)


def check_startup_redirects(cmd: SimpleCommand, ctx: Context) -> None:
    for redirect in cmd.redirects:
        target = redirect.target
        if is_file_write(redirect) and target is not None and not target.text.startswith("/dev/"):
            _judge(target.text, cmd.source, ctx)
