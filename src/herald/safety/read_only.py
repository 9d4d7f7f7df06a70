"""Known read-only commands: what an unattended turn may run with no allow pattern.

An unattended turn (cron, kanban workers, MCP/API turns nobody answers) runs a
command only when it is known to be read-only inspection or an allow pattern of
that job, worker or client matches it. This module is the first half: a closed
list of commands (``ls``, ``cat``, ``grep``/``rg``, ``find`` without actions,
``git status/log/diff/show`` …) judged on the parsed command (:mod:`.shell_lex`),
never on its text. Anything not on the list, or spelled in a way we cannot see
through, is *not* known read-only; the caller refuses it unless a pattern allows it.

A simple command is known read-only when all of these hold:

* its name is a literal word on the list, with no ``/`` (``./cat`` could be a
  script the turn wrote itself) and no expansion;
* it has no variable assignment (``PATH=/tmp/x ls``, ``GIT_PAGER=… git log``);
* it writes no file: output redirections may only go to another descriptor or
  ``/dev/null``; no redirection touches ``/dev/tcp`` or ``/dev/udp``;
* none of its options runs a program (:func:`.option_carriers.option_payloads`)
  and its command-specific check passes (``find`` without ``-exec``/``-delete``,
  ``sed`` without ``-i`` or ``w``/``e``, ``sort`` without ``-o``, ``git`` without
  ``-c`` and only inspecting subcommands …);
* no argument names a secret file (``cat ~/.ssh/id_rsa``, ``cat .env``).

A whole command is known read-only when every simple command in it is, nested
ones (``$(…)``, ``<(…)``) included: a pipeline of readers reads. ``env`` and
``printenv`` are not on the list: they print every secret in the environment.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from herald.safety.normalize import normalize_command
from herald.safety.option_carriers import option_payloads
from herald.safety.paths import secret_source
from herald.safety.shell_ast import Budget, ParseLimitError, Script, SimpleCommand, expand_braces
from herald.safety.shell_lex import parse

_QUIET_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})
_OUTPUT_OPS = frozenset({">", ">>", ">|", "&>", "&>>", ">&", "<>"})
_NETWORK_DEVICES = ("/dev/tcp/", "/dev/udp/")
_PROC_ENVIRON = re.compile(r"/proc/[^/]+/(?:task/[^/]+/)?environ")


def _secret(path: str, env: Mapping[str, str] | None) -> bool:
    """Reading path yields credentials: keys, .env files, a process's environment."""
    return bool(_PROC_ENVIRON.fullmatch(path)) or secret_source(path, env)


@dataclass(frozen=True)
class SegmentCheck:
    """One simple command and whether it is known read-only (`why` says why not)."""

    command: SimpleCommand
    read_only: bool
    why: str = ""

    @property
    def text(self) -> str:
        """The command as written, without the shell keywords around it."""
        words = " ".join(w.raw for w in self.command.words)
        return words or self.command.source.strip()

    @property
    def shown(self) -> str:
        """The command as written with its redirections (what a refusal names)."""
        parts = [self.text] if self.command.words else []
        for r in self.command.redirects:
            target = r.target.raw if r.target is not None else ""
            parts.append(
                f"{r.fd}{r.op}{target}" if r.op.endswith("&") else f"{r.fd}{r.op} {target}"
            )
        return " ".join(p for p in parts if p).strip() or self.text


@dataclass(frozen=True)
class ReadOnlyCheck:
    """The verdict on a whole command: `read_only` when every segment is."""

    read_only: bool
    segments: tuple[SegmentCheck, ...]
    why: str = ""  # set when the command could not be parsed at all

    @property
    def blockers(self) -> tuple[SegmentCheck, ...]:
        return tuple(s for s in self.segments if not s.read_only)


# -- per-command checks -------------------------------------------------------------
# A check gets the argument words as text (after the command name) and returns why the
# call is not read-only, or "" when it is. Commands mapped to None are read-only
# whatever their arguments (no option of theirs writes a file or runs a program), so
# an argument we cannot resolve ($f, a glob) is harmless there; for the others it is
# refused, since it could turn into an option.

Check = Callable[[list[str]], str]


def _flags(args: list[str]) -> list[str]:
    out: list[str] = []
    for arg in args:
        if arg == "--":
            break
        if arg.startswith("-") and arg != "-":
            out.append(arg)
    return out


def _has_short(args: list[str], letters: str) -> bool:
    return any(not f.startswith("--") and any(ch in letters for ch in f[1:]) for f in _flags(args))


def _has_long(args: list[str], *names: str) -> bool:
    """A long option among `names`, spelt out or abbreviated (getopt_long and git take
    any unambiguous prefix: `sort --outp=x` is `--output=x`)."""
    for flag in _flags(args):
        key = flag.split("=", 1)[0]
        if key.startswith("--") and len(key) > 2 and any(n.startswith(key) for n in names):
            return True
    return False


def _positionals(args: list[str]) -> list[str]:
    out: list[str] = []
    rest = False
    for arg in args:
        if rest or not arg.startswith("-") or arg == "-":
            out.append(arg)
        elif arg == "--":
            rest = True
    return out


def _at_most_one_file(args: list[str]) -> str:
    # uniq IN OUT, xxd IN OUT: a second operand is a file written.
    return "a second file operand is written" if len(_positionals(args)) > 1 else ""


_FIND_ACTIONS = frozenset({"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint",
                           "-fprint0", "-fprintf", "-fls"})  # fmt: skip


def _find(args: list[str]) -> str:
    bad = next((a for a in args if a in _FIND_ACTIONS), None)
    return f"find {bad} runs a command or changes files" if bad else ""


def _fd(args: list[str]) -> str:
    if _has_short(args, "xX") or _has_long(args, "--exec", "--exec-batch"):
        return "fd --exec runs a command"
    return ""


def _sort(args: list[str]) -> str:
    if _has_short(args, "o") or _has_long(args, "--output", "--compress-program"):
        return "sort -o writes a file"
    return ""


def _date(args: list[str]) -> str:
    if _has_short(args, "s") or _has_long(args, "--set"):
        return "date -s sets the clock"
    operands: list[str] = []
    takes_value = False
    for arg in args:
        if takes_value:
            takes_value = False
        elif arg in ("-d", "-f", "-r", "--date", "--file", "--reference"):
            takes_value = True  # the value of -d/-f/-r is not an operand
        elif not arg.startswith("-"):
            operands.append(arg)
    if any(not p.startswith("+") for p in operands):
        return "date MMDDhhmm sets the clock"
    return ""


def _printf(args: list[str]) -> str:
    # printf -v NAME assigns a variable (PATH, IFS …), changing what later words run
    return "printf -v assigns a variable" if args and args[0].startswith("-v") else ""


def _ps(args: list[str]) -> str:
    # BSD-style `e` (no dash) prints every process's environment, secrets included
    if any(not a.startswith("-") and "e" in a for a in args):
        return "ps e prints the environment of processes"
    return ""


def _set(args: list[str]) -> str:
    # `set -e`, `set -o pipefail` change only this shell; a bare `set` prints every
    # variable (secrets included) and `set -- …` replaces the arguments.
    dashed = [a for a in args if a.startswith(("-", "+"))]
    if not dashed or "--" in args or "-" in args:
        return "set without options prints every variable"
    if any(not a.startswith(("-", "+")) and not a.isalpha() for a in args):
        return "set without options prints every variable"
    return ""


def _hostname(args: list[str]) -> str:
    return "hostname NAME renames the machine" if _positionals(args) else ""


def _tree(args: list[str]) -> str:
    return "tree -o writes a file" if _has_short(args, "o") else ""


def _file(args: list[str]) -> str:
    return "file -C writes a magic file" if _has_short(args, "C") else ""


def _rg(args: list[str]) -> str:
    return "rg --pre runs a program" if _has_long(args, "--pre") else ""


_AWK_UNSAFE = re.compile(r"system|getline|[|>]|@|ENVIRON|close|fflush|PROCINFO")


def _awk(args: list[str]) -> str:
    if _has_short(args, "filE") or _has_long(args, "--file", "--load", "--include", "--exec",
                                                  "--source"):  # fmt: skip
        return "awk -f/-l/-i loads a program we cannot see"
    # Every argument is searched, not just the first operand: which word is the
    # program depends on -F/-v values, and guessing wrong would wave it through.
    # `>` is also a comparison in awk; telling it from `print > file` needs an awk
    # parser, so any `>` other than `>=` is refused (fail closed).
    if any(_AWK_UNSAFE.search(arg.replace(">=", "")) for arg in args):
        return "the awk program can run commands or write files (system, |, >, getline)"
    return ""


# -- sed: a small parser of the script, enough to find the commands that write or run --

_SED_SAFE_COMMANDS = frozenset("pPdDqQnNgGhHxlz={}=")
_SED_LABEL_COMMANDS = frozenset("btT:")
_SED_TEXT_COMMANDS = frozenset("aic")
_SED_FILE_READS = frozenset("rR")


def _skip_regex(script: str, i: int, delim: str) -> int:
    """Index just past the closing `delim` of a regex starting at i (after its opener)."""
    while i < len(script):
        ch = script[i]
        if ch == "\\":
            i += 2
            continue
        if ch == delim:
            return i + 1
        if ch == "\n":
            break
        i += 1
    raise ValueError("unterminated regex")


def _sed_address(script: str, i: int) -> int:
    if i < len(script) and script[i] in "0123456789$":
        while i < len(script) and script[i] in "0123456789$~+":
            i += 1
    elif i < len(script) and script[i] == "/":
        i = _skip_regex(script, i + 1, "/")
        while i < len(script) and script[i] in "IM":
            i += 1
    elif i + 1 < len(script) and script[i] == "\\":
        i = _skip_regex(script, i + 2, script[i + 1])
    return i


def sed_script_writes(script: str) -> bool:
    """True unless every command of the sed script is known not to write or run."""
    i, n = 0, len(script)
    try:
        while i < n:
            while i < n and script[i] in " \t\n;":
                i += 1
            if i >= n:
                return False
            i = _sed_address(script, i)
            if i < n and script[i] == ",":
                i = _sed_address(script, i + 1)
            while i < n and script[i] in " \t!":
                i += 1
            if i >= n:
                return False
            cmd = script[i]
            i += 1
            if cmd in _SED_SAFE_COMMANDS:
                continue
            if cmd in _SED_LABEL_COMMANDS:
                # a label ends at `;` or a newline; a `;` inside `:label` is read
                # differently by sed versions, so it is refused rather than guessed.
                end = min((k for k in (script.find(";", i), script.find("\n", i)) if k >= 0),
                          default=n)  # fmt: skip
                if cmd == ":" and ";" in script[i : end + 1]:
                    return True
                i = end
                continue
            if cmd in _SED_TEXT_COMMANDS or cmd in _SED_FILE_READS:
                end = script.find("\n", i)
                i = n if end < 0 else end  # the rest of the line is text or a path
                continue
            if cmd in "sy" and i < n:
                delim = script[i]
                if delim in "\\\n":
                    return True
                i = _skip_regex(script, i + 1, delim)
                i = _skip_regex(script, i, delim)
                if cmd == "s":
                    start = i
                    while i < n and script[i] not in ";\n}":
                        i += 1
                    flags = script[start:i].strip()
                    if not re.fullmatch(r"[gpiImM0-9]*", flags):
                        return True  # w FILE, e (run the pattern space), or unknown
                continue
            return True  # w, W, e, F, v, or something we do not know
    except ValueError:
        return True
    return False


def _sed(args: list[str]) -> str:
    if _has_short(args, "if") or _has_long(args, "--in-place", "--file"):
        return "sed -i edits files in place (or -f loads a script we cannot see)"
    if _has_short(args, "l") or _has_long(args, "--line-length"):
        # -l N takes a value, which would be mistaken for the script
        return "sed -l is not inspected"
    scripts: list[str] = []
    explicit = False
    it = iter(range(len(args)))
    for i in it:
        arg = args[i]
        if arg in ("-e", "--expression") and i + 1 < len(args):
            scripts.append(args[i + 1])
            explicit = True
            next(it, None)
        elif arg.startswith("--expression="):
            scripts.append(arg.split("=", 1)[1])
            explicit = True
        elif arg.startswith("-e") and len(arg) > 2 and not arg.startswith("--"):
            scripts.append(arg[2:])
            explicit = True
    if not explicit:
        scripts = _positionals(args)[:1]
    if any(sed_script_writes(s) for s in scripts):
        return "the sed script writes a file or runs a command (w, e)"
    return ""


# -- git --------------------------------------------------------------------------

_GIT_INSPECT = frozenset({"status", "log", "diff", "show", "rev-parse", "ls-files", "ls-tree",
                          "cat-file", "blame", "shortlog", "describe", "show-ref",
                          "for-each-ref", "merge-base", "count-objects", "rev-list",
                          "diff-tree", "diff-files", "diff-index", "name-rev", "whatchanged",
                          "grep", "version", "help"})  # fmt: skip
_GIT_LISTERS = {  # subcommands that only list when given no operand but these options
    "branch": frozenset({"-a", "-r", "-v", "-vv", "--all", "--remotes", "--verbose",
                         "--show-current", "--list", "-l", "--no-color", "--color"}),
    "tag": frozenset({"-l", "--list", "-n"}),
    "remote": frozenset({"-v", "--verbose"}),
    "stash": frozenset({"list"}),
    "reflog": frozenset({"show"}),
    "worktree": frozenset({"list"}),
}  # fmt: skip
# Options that write a file, run an external diff or a pager: not inspection.
_GIT_WRITING = ("--output", "--ext-diff", "--open-files-in-pager", "-O", "--paginate")


def _git(args: list[str]) -> str:
    i = 0
    while i < len(args) and args[i].startswith("-"):
        arg = args[i]
        if arg in ("-C",) and i + 1 < len(args):
            i += 2
            continue
        if arg in ("--no-pager", "-P", "--no-optional-locks", "--literal-pathspecs"):
            i += 1
            continue
        # -c/--config-env set config (core.pager, alias.x=!cmd, core.fsmonitor …);
        # --git-dir/--work-tree/--exec-path point git at files the turn may have written.
        return f"git {arg.split('=', 1)[0]} changes what git runs"
    if i >= len(args):
        return "git with no subcommand"
    sub, rest = args[i], args[i + 1 :]
    for arg in rest:
        if arg == "--":
            break
        key = arg.split("=", 1)[0]
        abbreviated = (
            key.startswith("--")
            and len(key) > 2
            and any(w.startswith(key) for w in _GIT_WRITING if w.startswith("--"))
        )
        if key in _GIT_WRITING or abbreviated or (key.startswith("-O") and sub == "grep"):
            return f"git {sub} {key} writes a file or runs a program"
    if sub in _GIT_INSPECT:
        return ""
    allowed = _GIT_LISTERS.get(sub)
    if allowed is not None and all(a in allowed for a in rest):
        return ""
    return f"git {sub} is not an inspecting git command"


# -- the list ---------------------------------------------------------------------------

READ_ONLY_COMMANDS: Mapping[str, Check | None] = {
    **dict.fromkeys(
        ("ls", "dir", "vdir", "cat", "tac", "head", "tail", "wc", "nl", "cut", "paste", "join",
         "comm", "cmp", "diff", "pwd", "echo", "true", "false", ":", "test", "[",
         "stat", "basename", "dirname", "realpath", "readlink", "du", "df", "free", "uptime",
         "whoami", "id", "groups", "uname", "nproc", "arch", "which", "type", "whereis",
         "grep", "egrep", "fgrep", "md5sum", "sha1sum", "sha224sum", "sha256sum",
         "sha384sum", "sha512sum", "b2sum", "cksum", "od", "hexdump", "strings", "rev", "fold",
         "expand", "unexpand", "column", "fmt", "tr", "seq", "base64", "base32", "cal",
         "sleep", "cd", "pgrep", "lsof", "ss", "netstat", "numfmt", "look", "wait", "exit",
         "return", "yes"),
        None,
    ),
    "uniq": _at_most_one_file,
    "xxd": _at_most_one_file,
    "find": _find,
    "fd": _fd,
    "fdfind": _fd,
    "sort": _sort,
    "date": _date,
    "hostname": _hostname,
    "printf": _printf,
    "ps": _ps,
    "set": _set,
    "tree": _tree,
    "file": _file,
    "rg": _rg,
    "sed": _sed,
    "awk": _awk,
    "gawk": _awk,
    "mawk": _awk,
    "git": _git,
}  # fmt: skip


def redirect_problem(cmd: SimpleCommand, env: Mapping[str, str] | None = None) -> str:
    """Why the redirections of cmd are not read-only ("" when they are)."""
    for redirect in cmd.redirects:
        target = redirect.target.text if redirect.target is not None else ""
        if target.startswith(_NETWORK_DEVICES):
            return f"it opens a network connection ({target})"
        reads = redirect.op == "<" and redirect.target is not None
        if reads and not redirect.target.dynamic and _secret(target, env):  # type: ignore[union-attr]
            return f"it reads a secret file ({target})"
        if redirect.op not in _OUTPUT_OPS or redirect.target is None:
            continue  # input, here-documents and here-strings only read
        if redirect.op == ">&" and (target.isdigit() or target == "-"):
            continue  # 2>&1 duplicates a descriptor
        if target in _QUIET_TARGETS and not redirect.target.dynamic:
            continue
        return f"it writes the file {target!r}"
    return ""


def check_segment(cmd: SimpleCommand, env: Mapping[str, str] | None = None) -> SegmentCheck:
    """Whether one simple command is known read-only (see the module docstring)."""
    if cmd.assignments:
        return SegmentCheck(cmd, False, "it sets variables for the command")
    problem = redirect_problem(cmd, env)
    if problem:
        return SegmentCheck(cmd, False, problem)
    if not cmd.words:
        return SegmentCheck(cmd, True)  # a keyword (`fi`, `done`) or a bare redirection
    head = cmd.words[0]
    name = head.text
    if head.dynamic or head.glob or head.brace or head.subs or head.procsub:
        return SegmentCheck(cmd, False, "its command name is computed")
    check = READ_ONLY_COMMANDS.get(name, ...)
    if check is ...:
        why = "a path to a program" if "/" in name else "not on the read-only list"
        return SegmentCheck(cmd, False, why)
    words = expand_braces(cmd.words[1:])
    args = [w.text for w in words]
    if option_payloads(name, args):
        return SegmentCheck(cmd, False, "an option of it runs a program")
    for word in words:
        if not word.dynamic and not word.glob and _secret(word.text, env):
            return SegmentCheck(cmd, False, f"it reads a secret file ({word.text})")
    if check is None:
        return SegmentCheck(cmd, True)
    # printf reads options only before its format: computed words after a literal
    # format are data (printf "%s" "$X"), never an option.
    inspected = words[:1] if name == "printf" else words
    if any(w.dynamic or w.glob or w.brace or w.subs or w.procsub for w in inspected):
        return SegmentCheck(cmd, False, "an argument is computed and could become an option")
    why = check(args)
    return SegmentCheck(cmd, not why, why)


def check_script(script: Script, env: Mapping[str, str] | None = None) -> ReadOnlyCheck:
    segments = tuple(check_segment(cmd, env) for cmd in script.walk())
    return ReadOnlyCheck(all(s.read_only for s in segments), segments)


def check_read_only(command: str, *, env: Mapping[str, str] | None = None) -> ReadOnlyCheck:
    """Whether `command` is known read-only: every simple command in it, nested ones
    included, is on the list and used only to read."""
    try:
        script = parse(normalize_command(command), env=env, budget=Budget())
    except (ParseLimitError, RecursionError):
        return ReadOnlyCheck(False, (), "too large or complex to check")
    if script.fork_bomb:
        return ReadOnlyCheck(False, (), "a fork bomb")
    result = check_script(script, env)
    if not result.segments:
        return ReadOnlyCheck(False, (), "no command")
    return result


def is_read_only(command: str, *, env: Mapping[str, str] | None = None) -> bool:
    return check_read_only(command, env=env).read_only


__all__ = [
    "READ_ONLY_COMMANDS",
    "ReadOnlyCheck",
    "SegmentCheck",
    "check_read_only",
    "check_segment",
    "is_read_only",
    "redirect_problem",
    "sed_script_writes",
]
