"""Wrappers and carriers: what actually runs behind ``sudo``, ``env``,
``timeout``, ``bash -c``, ``eval``, ``curl … | sh`` and inline interpreters.

* A *wrapper* (sudo, env, nohup, nice, timeout, time, setsid, command, exec,
  xargs, chroot, …) runs the rest of its words as a command: `unwrap` peels
  wrappers off until the real command is in front.
* A *carrier* turns a string into code: ``sh -c``, ``eval``, ``su -c``,
  ``env -S``, ``ssh host CMD``, ``watch CMD``, ``alias x=CMD``, ``trap CMD``,
  a shell fed from a here-document or from ``echo … |``. Its payload is
  checked as a command in its own right (bounded by the parser's depth limit).
* What feeds a shell's or an interpreter's stdin decides whether it is a
  download or decoded data being executed (``curl … | sh``,
  ``base64 -d | bash``, ``bash <(wget …)``).
"""

from __future__ import annotations

import dataclasses
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from itertools import islice

from herald.safety.invocation import Context, Invocation, parse_options
from herald.safety.long_options import BY_COMMAND, expand_long
from herald.safety.option_carriers import option_payloads, variable_payloads
from herald.safety.shell_ast import Script, SimpleCommand, Word
from herald.safety.static_eval import command_name, static_stdin, static_stdout

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "posh", "fish",
                    "rbash", "lksh", "oksh", "pdksh", "csh", "tcsh"})  # fmt: skip
DOWNLOADERS = frozenset({"curl", "wget", "fetch", "http", "https", "xh", "xhs", "aria2c", "lynx",
                         "links", "w3m", "nc", "ncat", "netcat", "socat", "telnet", "ftp",
                         "tftp", "lwp-request", "get", "ssh"})  # fmt: skip
_DECODE_FLAGS = {"-d", "--decode", "-D", "--decrypt", "-r", "--revert"}
_DECODERS_WITH_FLAG = frozenset({"base64", "base32", "basenc", "xxd", "openssl", "gpg", "gzip",
                                 "xz", "bzip2", "zstd", "lz4"})  # fmt: skip
_DECODERS = frozenset({"uudecode", "gunzip", "zcat", "gzcat", "bzcat", "bunzip2", "xzcat", "unxz",
                       "zstdcat", "unzstd", "lz4cat", "rev", "tr"})  # fmt: skip
_PASS_THROUGH = frozenset({"cat", "tee", "head", "tail", "pv", "dd", "stdbuf", "sort", "uniq"})
_INTERPRETER_RE = re.compile(
    r"(python|pypy|perl|ruby|node|nodejs|bun|deno|php|lua|luajit|rscript|julia|osascript|pwsh"
    r"|powershell|tclsh|wish|irb|groovy|kotlin|scala|swift)[\d.]*(?:\.exe)?"
)
_AWKS = frozenset({"awk", "gawk", "mawk", "nawk", "busybox-awk"})


# -- wrappers -----------------------------------------------------------------


@dataclass(frozen=True)
class _Spec:
    short_values: str = ""
    long_values: frozenset[str] = frozenset()
    skip: int = 0  # operands before the command (timeout DURATION, chroot DIR)
    no_command: frozenset[str] = frozenset()  # flags meaning nothing is run (command -v)
    payload: frozenset[str] = frozenset()  # flags whose value is shell code (env -S)
    extra_args: bool = False  # xargs appends arguments
    assignments: bool = False  # env NAME=value … cmd
    join_rest: bool = False  # the remaining words are one command string (watch, ssh)
    anywhere: bool = False  # options may follow operands (su user -c …)


_F = frozenset
_SPECS: dict[str, _Spec] = {
    "sudo": _Spec("ugpCDrtTUhR", _F({"--user", "--group", "--prompt", "--close-from", "--chdir",
                  "--role", "--type", "--command-timeout", "--other-user", "--host", "--chroot"}),
                  no_command=_F({"-l", "--list", "-v", "--validate", "-K", "--remove-timestamp",
                                 "-V", "--version", "--help"})),
    "doas": _Spec("uC"),
    "pkexec": _Spec("", _F({"--user"})),
    "run0": _Spec("u", _F({"--user", "--unit", "--property", "--description", "--slice"})),
    "env": _Spec("uCS", _F({"--unset", "--chdir", "--split-string"}),
                 payload=_F({"-S", "--split-string"}), assignments=True),
    "exec": _Spec("a"),
    "nohup": _Spec(),
    "nice": _Spec("n", _F({"--adjustment"})),
    "timeout": _Spec("ks", _F({"--kill-after", "--signal"}), skip=1),
    "time": _Spec("fo", _F({"--format", "--output"})),
    "setsid": _Spec(),
    "command": _Spec(no_command=_F({"-v", "-V"})),
    "builtin": _Spec(),
    "stdbuf": _Spec("ioe", _F({"--input", "--output", "--error"})),
    "ionice": _Spec("cnpPu", _F({"--class", "--classdata", "--pid", "--pgid", "--uid"}),
                    no_command=_F({"-p", "-P", "-u", "--pid", "--pgid", "--uid"})),
    "chrt": _Spec(skip=1, no_command=_F({"-p", "--pid", "-m", "--max"})),
    "taskset": _Spec(skip=1, no_command=_F({"-p", "--pid"})),
    "chroot": _Spec("", _F({"--userspec", "--groups"}), skip=1),
    "unshare": _Spec("SGRw"),
    "runuser": _Spec("ugGscw", _F({"--user", "--group", "--supp-group", "--shell", "--command",
                     "--session-command", "--whitelist-environment"}),
                     payload=_F({"-c", "--command", "--session-command"}), anywhere=True),
    "su": _Spec("csgGw", _F({"--command", "--session-command", "--shell", "--group",
                "--supp-group", "--whitelist-environment"}),
                payload=_F({"-c", "--command", "--session-command"}), anywhere=True,
                no_command=_F({"*"})),
    "xargs": _Spec("adEILnPs", _F({"--arg-file", "--delimiter", "--eof", "--max-lines",
                   "--max-args", "--max-procs", "--max-chars", "--process-slot-var"}),
                   extra_args=True),
    "busybox": _Spec(no_command=_F({"--list", "--help", "--list-full", "--install"})),
    "toybox": _Spec(),
    "watch": _Spec("nq", _F({"--interval"}), join_rest=True),
    "ssh": _Spec("bcDEeFIiJLlmOopQRSWwBP", skip=1, join_rest=True),
    "strace": _Spec("eopsuabIOPSX", no_command=_F({"-p"})),
    "ltrace": _Spec("eopsuaAnS", no_command=_F({"-p"})),
    "caffeinate": _Spec("tw"),
    "systemd-run": _Spec("puEMHG", _F({"--unit", "--property", "--description", "--slice",
                         "--uid", "--gid", "--nice", "--setenv", "--working-directory",
                         "--machine", "--host"})),
    "script": _Spec("cEIOTBm", _F({"--command", "--echo", "--log-in", "--log-out"}),
                    payload=_F({"-c", "--command"}), anywhere=True, no_command=_F({"*"})),
    "flock": _Spec("wEc", _F({"--timeout", "--conflict-exit-code", "--command"}),
                   payload=_F({"-c", "--command"}), skip=1),
    "faketime": _Spec("f", skip=1),
    "proxychains": _Spec("f"),
    "proxychains4": _Spec("f"),
    "torsocks": _Spec("uapP"),
    "unbuffer": _Spec(),
    "firejail": _Spec(),
    "fakeroot": _Spec(),
    "eatmydata": _Spec(),
    "nocache": _Spec(),
    "catchsegv": _Spec(),
    "valgrind": _Spec(),
}  # fmt: skip


def _payload_after_operand(words: list[Word]) -> str | None:
    """`flock FILE -c CMD`: a -c after the operand."""
    if len(words) >= 3 and words[1].text in ("-c", "--command"):
        return words[2].text
    return None


def _apply_spec(
    name: str, spec: _Spec, words: list[Word], ctx: Context | None, cmd: SimpleCommand
) -> tuple[list[Word], bool] | None:
    rest = words[1:]
    table = BY_COMMAND.get(name)
    if table is not None:
        rest = [dataclasses.replace(w, text=expand_long(w.text, table)) for w in rest]
    opts = parse_options(
        rest,
        short_values=spec.short_values,
        long_values=spec.long_values,
        stop_at_positional=not spec.anywhere,
    )
    segment = cmd.source
    if ctx is not None:
        for payload in option_payloads(name, [w.text for w in rest]):
            ctx.code(payload, segment)
    if name == "sudo":
        if opts.has("-S", "--stdin", "-A", "--askpass") and ctx is not None:
            ctx.approval(
                "dangerous.sudo_stdin",
                "runs as root with a password read from stdin or an askpass helper "
                "(sudo -S/-A), so no human types the password",
                segment,
            )
        if opts.has("-e", "--edit"):
            return [Word(text="sudoedit", raw="sudoedit"), *opts.positional], False
    for flag in spec.payload:
        value = opts.value(flag)
        if value is not None:
            extra = " ".join(w.text for w in opts.positional) if name == "env" else ""
            if ctx is not None:
                ctx.code(f"{value} {extra}".strip(), segment)
            return None
    if opts.has(*spec.no_command) or "*" in spec.no_command:
        return None
    remaining = rest[opts.rest_index :]
    if spec.assignments:
        assigned: list[str] = []
        while remaining and "=" in remaining[0].text and not remaining[0].text.startswith("="):
            assigned.append(remaining[0].text)
            remaining = remaining[1:]
        if ctx is not None:
            for payload in variable_payloads(assigned):
                ctx.code(payload, segment)
    if name == "flock":
        payload = _payload_after_operand(remaining)
        if payload is not None:
            if ctx is not None:
                ctx.code(payload, segment)
            return None
    remaining = remaining[spec.skip :]
    if name == "watch" and opts.has("-x", "--exec"):
        return remaining, False
    if spec.join_rest:
        if remaining and ctx is not None:
            ctx.code(" ".join(w.text for w in remaining), segment)
        return None
    if name == "sudo" and opts.has("-s", "-i", "--shell", "--login") and len(remaining) == 1:
        if ctx is not None:
            ctx.code(remaining[0].text, segment)
        return None
    if name == "xargs" and remaining:
        fed = static_stdin(cmd)
        if fed is not None and len(fed) <= 4096:  # echo / | xargs rm -rf
            items = [Word(text=item, raw=item) for item in fed.split()[:256]]
            return [*remaining, *items], False
    return remaining, spec.extra_args


def unwrap(cmd: SimpleCommand, ctx: Context | None) -> Invocation | None:
    """The command behind the wrappers, or None when nothing is run.

    With ctx, wrapper findings (sudo -S) are recorded and carrier payloads
    (env -S, su -c …) are checked; with None this is a side-effect-free look.
    """
    words = cmd.words
    extra = False
    for _ in range(16):
        if not words:
            return None
        name = command_name(words[0].text)
        spec = _SPECS.get(name)
        if spec is None:
            break
        result = _apply_spec(name, spec, words, ctx, cmd)
        if result is None:
            return None
        words, more = result
        extra = extra or more
    if not words:
        return None
    return Invocation(words=words, cmd=cmd, extra_args=extra)


# -- what feeds stdin -----------------------------------------------------------


@dataclass(frozen=True)
class Source:
    kind: str  # literal | download | decoded | file | none | unknown
    text: str = ""


def _decodes(cmd: SimpleCommand) -> bool:
    inv = unwrap(cmd, None)
    if inv is None:
        return False
    name = inv.name
    args = set(inv.args)
    return name in _DECODERS or (
        name in _DECODERS_WITH_FLAG
        and bool(
            args & _DECODE_FLAGS or any(re.fullmatch(r"-[a-zA-Z]*[dr][a-zA-Z]*", a) for a in args)
        )
    )


def _chain_decodes(cmd: SimpleCommand) -> bool:
    node: SimpleCommand | None = cmd
    for _ in range(16):
        if node is None:
            return False
        if node.words and _decodes(node):
            return True
        node = node.stdin_from
    return False


def producer(cmd: SimpleCommand, depth: int = 0) -> Source:
    """What cmd writes to its stdout, as far as it can be known. Decoded
    data stays ``decoded`` even when its text is known (it is checked, and
    running decoded text still needs approval)."""
    literal = static_stdout(cmd)
    if literal is not None:
        return Source("decoded" if _chain_decodes(cmd) else "literal", literal)
    if depth > 8 or not cmd.words:
        return Source("unknown")
    if command_name(cmd.words[0].text) == "ssh":
        return Source("download")
    inv = unwrap(cmd, None)
    if inv is None:
        return Source("unknown")
    name = inv.name
    if name in DOWNLOADERS:
        return Source("download")
    if _decodes(cmd):
        return Source("decoded")
    if name == "tee":  # its arguments are outputs; stdin flows through
        return stdin_of(cmd, depth + 1)
    if name in _PASS_THROUGH:
        files = [a for a in inv.args if not a.startswith("-") and "=" not in a]
        if files:
            return Source("file", files[0])
        return stdin_of(cmd, depth + 1)
    return Source("unknown")


def script_output(script: Script, depth: int = 0) -> Source:
    return producer(script.commands[-1], depth) if script.commands else Source("none")


def _word_source(word: Word, depth: int) -> Source:
    for sub in word.subs:
        src = script_output(sub, depth + 1)
        if src.kind in ("download", "decoded"):
            return src
    return Source("unknown")


def stdin_of(cmd: SimpleCommand, depth: int = 0) -> Source:
    """What cmd reads on stdin: a here-document, a here-string, a file, a pipe."""
    for redirect in cmd.redirects:
        target = redirect.target
        if redirect.op in ("<<", "<<-"):
            return Source("literal", redirect.heredoc or "")
        if target is None or redirect.fd not in ("", "0"):
            continue
        if redirect.op == "<<<":
            return _word_source(target, depth) if target.dynamic else Source("literal", target.text)
        if redirect.op in ("<", "<>"):
            if target.procsub and target.subs:
                return script_output(target.subs[0], depth + 1)
            if target.text.startswith(("/dev/tcp/", "/dev/udp/")):
                return Source("download")
            return Source("file", target.text)
    if cmd.stdin_from is not None:
        return producer(cmd.stdin_from, depth + 1)
    return Source("none")


def _operand_source(word: Word, inv: Invocation) -> Source:
    """A script operand: <(…) is a producer, /dev/stdin and - are stdin."""
    if word.procsub and word.subs:
        return script_output(word.subs[0])
    if word.text in ("-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"):
        return stdin_of(inv.cmd)
    if word.text.startswith(("/dev/tcp/", "/dev/udp/")):
        return Source("download")
    if word.dynamic:
        return _word_source(word, 0)
    return Source("file", word.text)


def _run_source(source: Source, inv: Invocation, ctx: Context, *, as_shell: bool) -> None:
    segment = inv.segment
    if source.kind == "download":
        ctx.approval("dangerous.pipe_to_shell", f"runs downloaded content with {inv.name}", segment)
    elif source.kind == "decoded":
        ctx.approval("dangerous.pipe_to_shell", f"runs decoded data with {inv.name}", segment)
        if source.text and as_shell:
            ctx.code(source.text, segment)
    elif source.kind == "literal":
        if as_shell:
            ctx.code(source.text, segment)
        else:
            _inline_code(inv.name, source.text, inv, ctx)


# -- carriers -------------------------------------------------------------------


def _shell_option_words(words: list[Word]) -> list[Word]:
    """bash turns an option off with ``+`` (``+O extglob``, ``+o posix``,
    ``+xv``); for finding ``-c`` and its payload that is the same as ``-``."""
    out = list(words)
    i = 0
    while i < len(out):
        text = out[i].text
        if text == "--" or not text.startswith(("-", "+")) or len(text) < 2:
            break
        if text.startswith("+"):
            out[i] = dataclasses.replace(out[i], text="-" + text[1:])
        if out[i].text in ("-o", "-O", "--rcfile", "--init-file"):
            i += 1  # the value of the option
        i += 1
    return out


def _shell(inv: Invocation, ctx: Context) -> None:
    opts = parse_options(
        _shell_option_words(inv.arg_words),
        short_values="oO",
        long_values={"--rcfile", "--init-file"},
    )
    if opts.has("-c"):
        if opts.positional:
            payload = opts.positional[0]
            if payload.dynamic and not payload.subs and payload.text.lstrip().startswith("$"):
                _opaque(inv, ctx)
            _fed_from_subs(payload, inv, ctx)
            ctx.code(payload.text, inv.segment)
        return
    if opts.positional and not opts.has("-s"):
        _run_source(_operand_source(opts.positional[0], inv), inv, ctx, as_shell=True)
        return
    _run_source(stdin_of(inv.cmd), inv, ctx, as_shell=True)


def _opaque(inv: Invocation, ctx: Context) -> None:
    ctx.approval(
        "dangerous.opaque_code",
        f"{inv.name} runs code held in a variable whose value is unknown",
        inv.segment,
    )


def _fed_from_subs(word: Word, inv: Invocation, ctx: Context) -> None:
    """`bash -c "$(base64 -d f)"`: the code is what a substitution printed."""
    for sub in word.subs:
        kind = script_output(sub).kind
        if kind in ("download", "decoded"):
            what = "downloaded" if kind == "download" else "decoded"
            ctx.approval(
                "dangerous.pipe_to_shell", f"runs {what} text with {inv.name}", inv.segment
            )
            return


def _eval(inv: Invocation, ctx: Context) -> None:
    if not inv.arg_words:
        return
    first = inv.arg_words[0]
    if first.dynamic and not first.subs and first.text.lstrip().startswith("$"):
        _opaque(inv, ctx)
    for word in inv.arg_words:
        _fed_from_subs(word, inv, ctx)
    ctx.code(" ".join(inv.args), inv.segment)


def _source(inv: Invocation, ctx: Context) -> None:
    if inv.arg_words:
        source = _operand_source(inv.arg_words[0], inv)
        if source.kind != "file":
            _run_source(source, inv, ctx, as_shell=True)


def _alias(inv: Invocation, ctx: Context) -> None:
    for arg in inv.args:
        _, eq, value = arg.partition("=")
        if eq and value.strip():
            ctx.code(value, inv.segment)


def _trap(inv: Invocation, ctx: Context) -> None:
    args = inv.args
    if len(args) >= 2 and not args[0].startswith("-"):
        ctx.code(args[0], inv.segment)


def _at(inv: Invocation, ctx: Context) -> None:
    if not any(a.startswith("-") and ("f" in a or "l" in a or "r" in a) for a in inv.args):
        _run_source(stdin_of(inv.cmd), inv, ctx, as_shell=True)


# -- inline interpreters --------------------------------------------------------

# (option letters taking a value, long options taking a value, flags carrying code)
_INTERPRETERS: dict[str, tuple[str, frozenset[str], frozenset[str]]] = {
    "python": ("cWXmQ", _F(), _F({"-c"})),
    "pypy": ("cWXmQ", _F(), _F({"-c"})),
    "perl": ("eEMmI", _F(), _F({"-e", "-E"})),
    "ruby": ("eIrCEFTx", _F(), _F({"-e"})),
    "node": ("eprC", _F({"--eval", "--print", "--require"}), _F({"-e", "-p", "--eval", "--print"})),
    "nodejs": ("eprC", _F({"--eval", "--print", "--require"}), _F({"-e", "-p", "--eval", "--print"})),
    "bun": ("epr", _F({"--eval", "--print"}), _F({"-e", "-p", "--eval", "--print"})),
    "php": ("rcdzfB", _F(), _F({"-r", "-B", "-R", "-F", "-E"})),
    "lua": ("el", _F(), _F({"-e"})),
    "luajit": ("elj", _F(), _F({"-e"})),
    "rscript": ("e", _F(), _F({"-e"})),
    "julia": ("eEL", _F({"--eval", "--print"}), _F({"-e", "-E", "--eval", "--print"})),
    "osascript": ("el", _F(), _F({"-e"})),
    "groovy": ("e", _F(), _F({"-e"})),
}  # fmt: skip
_MAX_CODE_STRINGS = 32  # shell strings taken from one piece of inline code
_PWSH_CODE = frozenset({"-c", "-command", "-e", "-ec", "-enc", "-encodedcommand"})

_EXEC_CALL_RE = re.compile(
    r"\b(?:system|popen[23]?|exec(?:l|lp|le|v|vp|ve|Sync|File|FileSync)?|spawn(?:Sync)?"
    r"|shell_exec|passthru|check_output|check_call|call|run|Popen|getoutput|getstatusoutput"
    r"|proc_open|IO\.popen|Open3\.\w+)\s*\(\s*"
)
_STR_LIT_RE = re.compile(
    r"[rRbBfFuU]{0,2}(?:'((?:[^'\\\n]|\\.){0,4000})'|\"((?:[^\"\\\n]|\\.){0,4000})\")"
)
_LIST_SEP_RE = re.compile(r"\s*,\s*")
_BACKTICK_CODE_RE = re.compile(
    r"`([^`]{1,4000})`|\bqx\s*[({\[/|]([^)}\]/|]{1,4000})|%x\(([^)]{1,4000})\)"
)
_CODE_FORK_BOMB_RE = re.compile(
    r"\bfork\s*(?:\(\s*\))?\s*while\s+fork\b"
    r"|\bwhile\s*\(?\s*(?:1|true|True)\s*\)?\s*[:{]?\s*(?:os\.|pcntl_|Process\.)?fork\b"
    r"|\bfor\s*\(\s*;\s*;\s*\)\s*\{?\s*(?:pcntl_)?fork\b"
    r"|\bloop\s*(?:\{|do)\s*(?:Process\.)?fork\b"
)
_PERL_FILTER_RE = re.compile(r"\s*(?:s|y|tr)([^\w\s])")
_PERL_RISKY_RE = re.compile(
    r"`|\b(?:system|exec|qx|open|sysopen|unlink|fork|eval|require|use|do|kill|rename|rmdir|chmod"
    r"|chown|truncate|syscall|socket|connect|pipe|symlink|link|glob|mkdir)\b"
)


def _exec_literals(code: str) -> list[str]:
    """Shell strings handed to system()/subprocess/exec-like calls in code."""
    found: list[str] = []
    for m in _EXEC_CALL_RE.finditer(code):
        pos = m.end()
        if code.startswith("[", pos):
            items: list[str] = []
            pos += 1
            for _ in range(64):
                lit = _STR_LIT_RE.match(code, pos)
                if lit is None:
                    break
                items.append(lit.group(1) if lit.group(1) is not None else lit.group(2) or "")
                sep = _LIST_SEP_RE.match(code, lit.end())
                pos = sep.end() if sep else lit.end()
            if items:
                found.append(" ".join(items))
        else:
            lit = _STR_LIT_RE.match(code, pos)
            if lit is not None:
                found.append(lit.group(1) if lit.group(1) is not None else lit.group(2) or "")
        if len(found) >= _MAX_CODE_STRINGS:
            break
    return found


_RMTREE_RE = re.compile(
    r"\b(?:rmtree|rm_rf|rm_r|remove_dir_all|rmSync|rmdirSync)\s*\(\s*[rRbfuU]{0,2}"
    r"(?:'([^'\n]{1,400})'|\"([^\"\n]{1,400})\")"
)
_RMTREE_HOME_RE = re.compile(
    r"\b(?:rmtree|rm_rf|rmSync)\s*\(\s*(?:(?:pathlib\.)?Path\.home\(\)|os\.path\.expanduser\(\s*['\"]~['\"]\s*\)"
    r"|os\.environ\[\s*['\"]HOME['\"]\s*\]|os\.getenv\(\s*['\"]HOME['\"]\s*\)|Dir\.home"
    r"|os\.homedir\(\)|process\.env\.HOME)"
)


def _inline_code(lang: str, code: str, inv: Invocation, ctx: Context) -> None:
    segment = inv.segment
    ctx.approval("dangerous.inline_code", f"runs inline {lang} code", segment)
    if _CODE_FORK_BOMB_RE.search(code):
        ctx.hardline("hardline.fork_bomb", "is a fork bomb (spawns processes endlessly)", segment)
    for literal in _exec_literals(code):
        ctx.code(literal, segment)
    # library calls that delete a tree are checked as the equivalent rm -rf
    for m in islice(_RMTREE_RE.finditer(code), _MAX_CODE_STRINGS):
        ctx.code("rm -rf " + shlex.quote(m.group(1) or m.group(2) or ""), segment)
    if _RMTREE_HOME_RE.search(code):
        ctx.code("rm -rf ~", segment)
    if lang in ("perl", "ruby", "php"):
        for m in islice(_BACKTICK_CODE_RE.finditer(code), _MAX_CODE_STRINGS):
            ctx.code(next(g for g in m.groups() if g is not None), segment)


def _perl_filter(opts_flags: set[str], codes: list[str]) -> bool:
    """perl -ne 'print if /x/' / perl -pi -e 's/a/b/g': a sed-style filter that
    loads no module and calls nothing outside Perl, not a program."""
    if not opts_flags & {"-p", "-n"} or opts_flags & {"-M", "-m", "-I", "-E"}:
        return False
    for code in codes:
        if _PERL_RISKY_RE.search(code):
            return False
        if _PERL_FILTER_RE.match(code) and "e" in re.search(r"[a-z]*\s*;?\s*$", code).group():  # type: ignore[union-attr]
            return False  # s///e evaluates the replacement as code
    return True


def _pwsh_code_flag(arg: str) -> bool:
    """-Command / -EncodedCommand by any prefix PowerShell accepts (-c, -Comm,
    -e, -enc, -ec), with - or /."""
    a = arg.lower()
    if a.startswith("/"):
        a = "-" + a[1:]
    if a in _PWSH_CODE:
        return True
    return len(a) >= 2 and ("-command".startswith(a) or "-encodedcommand".startswith(a))


_PWSH_VALUE_OPTIONS = ("-executionpolicy", "-windowstyle", "-workingdirectory", "-outputformat",
                       "-inputformat", "-version", "-configurationname", "-custompipename",
                       "-psconsolefile", "-settingsfile", "-ep", "-ex", "-wd", "-of", "-if")  # fmt: skip


def _pwsh_bare_command(args: list[str]) -> str:
    """powershell Get-Process; Remove-Item …: with no -Command or -File,
    Windows PowerShell runs the remaining words as a command (pwsh treats a
    first word that is not a .ps1 file the same way in practice), so they are
    judged as -Command text."""
    i = 0
    while i < len(args):
        a = args[i].lower()
        if a.startswith("/") and len(a) > 1 and "/" not in a[1:] and "\\" not in a:
            a = "-" + a[1:]
        if not a.startswith("-") or a == "-":
            break
        if a in ("-f", "-fi", "-fil", "-file"):
            return ""
        long = len(a) >= 3 and any(o.startswith(a) for o in _PWSH_VALUE_OPTIONS)
        takes_value = long or a in ("-w", "-v", "-o")
        if takes_value:
            i += 1
        i += 1
    rest = args[i:]
    if not rest or rest[0] == "-" or rest[0].lower().endswith(".ps1"):
        return ""
    return " ".join(rest)


def _windows_cmd(inv: Invocation, ctx: Context) -> None:
    """cmd /c CMD, cmd /k CMD, cmd /r CMD: the rest of the line is a command."""
    for i, arg in enumerate(inv.args):
        if arg.lower() in ("/c", "/k", "/r"):
            rest = " ".join(inv.args[i + 1 :])
            ctx.approval(
                "dangerous.inline_code", f"runs a cmd.exe command line: {rest[:80]}", inv.segment
            )
            ctx.code(rest, inv.segment)
            return


def _fed_from_network(inv: Invocation, ctx: Context) -> None:
    """python -c "$(curl …)", curl … | python -c 'exec(stdin)': the code or
    its input comes from a download or decoded data."""
    for word in inv.arg_words:
        _fed_from_subs(word, inv, ctx)
    source = stdin_of(inv.cmd)
    if source.kind in ("download", "decoded"):
        what = "downloaded" if source.kind == "download" else "decoded"
        ctx.approval("dangerous.pipe_to_shell", f"feeds {what} data to {inv.name}", inv.segment)


def _interpreter(lang: str, inv: Invocation, ctx: Context) -> None:
    if lang in ("pwsh", "powershell"):
        words = inv.arg_words
        for i, word in enumerate(words[:-1]):
            if _pwsh_code_flag(word.text):
                _inline_code(lang, words[i + 1].text, inv, ctx)
                return
        bare = _pwsh_bare_command(inv.args)
        if bare:
            _inline_code(lang, bare, inv, ctx)
        return
    if lang == "deno":
        if inv.args[:1] == ["eval"] and len(inv.args) > 1:
            _inline_code(lang, inv.args[-1], inv, ctx)
        return
    spec = _INTERPRETERS.get(lang)
    if spec is None:
        return
    short, long, code_flags = spec
    opts = parse_options(inv.arg_words, short_values=short, long_values=long)
    codes = [v for f, v in opts.flags if f in code_flags and v is not None]
    if codes:
        _fed_from_network(inv, ctx)
        if lang == "perl" and _perl_filter({f for f, _ in opts.flags}, codes):
            return
        _inline_code(lang, "\n".join(codes), inv, ctx)
        return
    if opts.has("-m") or (lang in ("php", "osascript") and opts.has("-f")):
        return
    if opts.positional and opts.positional[0].text != "-":
        source = _operand_source(opts.positional[0], inv)
        if source.kind != "file":
            _run_source(source, inv, ctx, as_shell=False)
        return
    _run_source(stdin_of(inv.cmd), inv, ctx, as_shell=False)


_AWK_RISKY_RE = re.compile(r"\bsystem\s*\(|\|\s*getline|\bprint[^;|}]{0,200}\|\s*\"|\|&")
_AWK_SYSTEM_RE = re.compile(r"\bsystem\s*\(\s*\"((?:[^\"\\]|\\.){1,4000})\"")


def _awk(inv: Invocation, ctx: Context) -> None:
    opts = parse_options(inv.arg_words, short_values="fvFe", long_values={"--file", "--source"})
    programs = opts.values("-e", "--source")
    if not programs and not opts.has("-f", "--file") and opts.positional:
        programs = [opts.positional[0].text]
    for program in programs:
        if _AWK_RISKY_RE.search(program):
            ctx.approval(
                "dangerous.inline_code", f"{inv.name} program runs shell commands", inv.segment
            )
            for m in islice(_AWK_SYSTEM_RE.finditer(program), _MAX_CODE_STRINGS):
                ctx.code(m.group(1), inv.segment)


_CARRIERS: dict[str, Callable[[Invocation, Context], None]] = {
    "eval": _eval,
    "source": _source,
    ".": _source,
    "alias": _alias,
    "trap": _trap,
    "at": _at,
    "batch": _at,
    "cmd": _windows_cmd,
    "cmd.exe": _windows_cmd,
}


def check_carriers(inv: Invocation, ctx: Context) -> None:
    """Check the code a shell, eval, source, alias, trap or interpreter runs,
    and the commands that options such as ``man -P`` or ``git -c core.pager``
    would run."""
    name = inv.name
    for payload in option_payloads(name, inv.args):
        ctx.code(payload, inv.segment)
    if name in SHELLS:
        _shell(inv, ctx)
        return
    handler = _CARRIERS.get(name)
    if handler is not None:
        handler(inv, ctx)
        return
    if name in _AWKS:
        _awk(inv, ctx)
        return
    m = _INTERPRETER_RE.fullmatch(name)
    if m is not None:
        _interpreter(m.group(1), inv, ctx)
