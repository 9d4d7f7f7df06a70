"""Rules for commands that wire a shell to the network or publish files:
reverse and bind shells (``/dev/tcp`` redirects, ``socat … EXEC:``,
``nc -e``, a shell piped into ``nc``) and file servers listening on every
interface that serve a home directory or the root.

The effect judged is "someone on the network gets a shell or the user's
files", whatever tool produces it.
"""

from __future__ import annotations

import re

from herald.safety.carriers import SHELLS
from herald.safety.effects import resolved
from herald.safety.invocation import Context, Invocation
from herald.safety.long_options import expand_long
from herald.safety.paths import Target, classify_delete_target, sensitive_target
from herald.safety.shell_ast import SimpleCommand
from herald.safety.static_eval import command_name

REMOTE_SHELL = "dangerous.remote_shell"
EXPOSED_FILES = "dangerous.exposed_files"

NETCATS = frozenset({"nc", "ncat", "netcat", "nc.traditional", "nc.openbsd", "busybox-nc",
                     "pwncat", "rlwrap"})  # fmt: skip
SOCKET_TOOLS = frozenset({*NETCATS, "socat", "telnet", "openssl", "cryptcat", "sbd", "gsocket",
                          "gs-netcat", "ztcp"})  # fmt: skip
# socat address types that start a program on the far side of a connection.
_SOCAT_EXEC_RE = re.compile(r"^(?:EXEC|SYSTEM|EXECVP)\s*:|[!,]\s*(?:EXEC|SYSTEM)\s*:", re.I)
_NCAT_LONG = {"--exec": "--exec", "--sh-exec": "--exec", "--lua-exec": "--exec",
              "--listen": "--listen", "--keep-open": "--keep-open", "--verbose": "--verbose",
              "--source": "--source", "--ssl": "--ssl", "--output": "--output",
              "--hex-dump": "--hex-dump", "--udp": "--udp", "--sctp": "--sctp",
              "--send-only": "--send-only", "--recv-only": "--recv-only", "--wait": "--wait",
              "--idle-timeout": "--idle-timeout", "--broker": "--broker", "--chat": "--chat",
              "--allow": "--allow", "--deny": "--deny", "--proxy": "--proxy",
              "--max-conns": "--max-conns", "--nodns": "--nodns", "--crlf": "--crlf",
              "--ssl-cert": "--ssl-cert", "--ssl-key": "--ssl-key", "--version": "--version",
              "--help": "--help", "--telnet": "--telnet", "--zero": "--zero"}  # fmt: skip


def _is_socket_path(text: str) -> bool:
    return text.startswith(("/dev/tcp/", "/dev/udp/"))


def check_socket_redirects(cmd: SimpleCommand, ctx: Context) -> None:
    """``>& /dev/tcp/host/port``, ``exec 3<>/dev/udp/…``: bash opens a raw
    network connection and wires the command's streams to it, the core of
    every shell-only reverse shell."""
    for redirect in cmd.redirects:
        target = redirect.target
        if redirect.op in ("<", "<<<"):
            continue  # reading a download: judged by what consumes it (pipe_to_shell)
        if target is not None and _is_socket_path(target.text):
            ctx.approval(
                REMOTE_SHELL,
                f"connects the shell's input or output to the network ({target.text})",
                cmd.source,
            )
            return


def _shell_feeds(cmd: SimpleCommand) -> bool:
    """cmd's stdin comes from an interactive shell: `sh -i | nc host port`."""
    source = cmd.stdin_from
    for _ in range(4):
        if source is None or not source.words:
            return False
        name = command_name(source.words[0].text)
        if name in SHELLS:
            return not any(w.text.endswith((".sh", ".bash")) for w in source.words[1:])
        source = source.stdin_from
    return False


def rule_socket_tools(inv: Invocation, ctx: Context) -> None:
    name, args = inv.name, inv.args
    what = ""
    if name == "ztcp" and args and not set(args) & {"-c", "-L"}:
        what = "opens a raw TCP connection or listener from zsh (ztcp)"
    elif name == "socat":
        if any(_SOCAT_EXEC_RE.search(a) for a in args):
            what = "joins a network connection to a program (socat EXEC:/SYSTEM:)"
    elif name in NETCATS:
        for arg in args:
            long = expand_long(arg.split("=", 1)[0], _NCAT_LONG) if arg.startswith("--") else ""
            short = (
                arg.startswith("-") and not arg.startswith("--") and bool(set(arg[1:]) & {"e", "c"})
            )
            if long == "--exec" or short:
                what = f"runs a program for whoever connects ({name} {arg})"
                break
    if not what and name in SOCKET_TOOLS and args and _shell_feeds(inv.cmd):
        what = f"sends a shell's output to the network ({name})"
    if not what and name in SOCKET_TOOLS and any(_is_socket_path(a) for a in args):
        what = f"opens a raw network connection ({name})"
    if what:
        ctx.approval(REMOTE_SHELL, what, inv.segment)


# -- file servers ---------------------------------------------------------------

_LOOPBACK = ("127.", "localhost", "::1", "[::1]", "ip6-localhost")
_HTTP_SERVER_LONG = {"--bind": "--bind", "--directory": "--directory", "--cgi": "--cgi",
                     "--protocol": "--protocol", "--help": "--help"}  # fmt: skip
_SERVER_MODULES = frozenset({"http.server", "SimpleHTTPServer", "CGIHTTPServer", "uploadserver",
                             "pyftpdlib", "RangeHTTPServer"})  # fmt: skip


def _exposes(directory: str, bind: str | None, ctx: Context, *, all_by_default: bool) -> str:
    if bind is not None and bind.startswith(_LOOPBACK):
        return ""
    if bind is None and not all_by_default:
        return ""
    where = resolved(directory or ".", ctx) if directory else (ctx.cwd or ".")
    where = resolved(where, ctx)
    kind = classify_delete_target(where, ctx.env)
    if kind is not Target.OTHER or sensitive_target(where, ctx.env):
        return where
    return ""


def _python_server(inv: Invocation, ctx: Context) -> None:
    args = inv.args
    if "-m" not in args:
        return
    i = args.index("-m")
    if i + 1 >= len(args) or args[i + 1] not in _SERVER_MODULES:
        return
    bind: str | None = None
    directory = ""
    rest = args[i + 2 :]
    j = 0
    while j < len(rest):
        arg = rest[j]
        key, eq, value = arg.partition("=")
        key = expand_long(key, _HTTP_SERVER_LONG) if key.startswith("--") else key
        if key in ("-b", "--bind") or key in ("-d", "--directory"):
            if not eq and j + 1 < len(rest):
                value = rest[j + 1]
                j += 1
            if key in ("-b", "--bind"):
                bind = value
            else:
                directory = value
        elif key.startswith("-d") and len(key) > 2:
            directory = key[2:]
        elif key.startswith("-b") and len(key) > 2:
            bind = key[2:]
        j += 1
    where = _exposes(directory, bind, ctx, all_by_default=True)
    if where:
        ctx.approval(
            EXPOSED_FILES,
            f"serves {where} to the whole network (python -m {args[i + 1]})",
            inv.segment,
        )


def rule_file_servers(inv: Invocation, ctx: Context) -> None:
    """python -m http.server, php -S, busybox httpd, npx http-server/serve."""
    name, args = inv.name, inv.args
    if re.fullmatch(r"python[\d.]*|pypy[\d.]*", name):
        _python_server(inv, ctx)
        return
    where = ""
    if name.startswith("php") and "-S" in args:
        i = args.index("-S")
        bind = args[i + 1] if i + 1 < len(args) else ""
        docroot = args[args.index("-t") + 1] if "-t" in args[:-1] else ""
        where = (
            _exposes(docroot, bind, ctx, all_by_default=True)
            if not bind.startswith(_LOOPBACK)
            else ""
        )
    elif (name == "busybox" and args[:1] == ["httpd"]) or (name == "httpd" and "-h" in args):
        docroot = args[args.index("-h") + 1] if "-h" in args[:-1] else ""
        where = _exposes(docroot, None, ctx, all_by_default=True)
    elif name in ("npx", "http-server", "serve") and args:
        rest = args[1:] if name == "npx" else args
        if name == "npx" and args[0] not in ("http-server", "serve"):
            return
        operands = [a for a in rest if not a.startswith("-")]
        bind = None
        for flag in ("-a", "--listen", "-l"):
            if flag in rest[:-1]:
                bind = rest[rest.index(flag) + 1]
        where = _exposes(operands[0] if operands else "", bind, ctx, all_by_default=True)
    if where:
        ctx.approval(EXPOSED_FILES, f"serves {where} to the whole network ({name})", inv.segment)
