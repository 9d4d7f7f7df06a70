"""What a tiny producer pipeline prints, computed without running it.

Obfuscation often hides a command behind ``$(echo rm)``,
``echo cm0gLXJmIC8= | base64 -d | sh`` or ``printf '\x72\x6d'``. When the
producer is a chain of literal ``echo``/``printf`` through ``base64 -d``,
``rev`` or ``cat``, its output is known statically and is checked as code.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping

from herald.safety.shell_ast import Script, SimpleCommand

_ANSI_C_ESCAPE_RE = re.compile(
    r"\\(x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3}|c.|.)", re.S
)
_ANSI_C_SIMPLE = {
    "n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b",
    "f": "\f", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?",
}  # fmt: skip


def decode_ansi_c(body: str) -> str:
    def sub(match: re.Match[str]) -> str:
        esc = match.group(1)
        head = esc[0]
        try:
            if head in "xuU" and len(esc) > 1:
                return chr(int(esc[1:], 16))
            if head in "01234567":
                return chr(int(esc, 8) & 0xFF)
        except (ValueError, OverflowError):
            return ""
        if head == "c" and len(esc) == 2:
            return chr(ord(esc[1]) & 0x1F)
        return _ANSI_C_SIMPLE.get(esc, "\\" + esc)

    return _ANSI_C_ESCAPE_RE.sub(sub, body)


_PASS_THROUGH = frozenset({"cat", "tee", "head", "tail", "dd", "pv", "stdbuf"})


def command_name(word: str) -> str:
    """`/usr/bin/RM` -> `rm` (case-folded: macOS file systems ignore case)."""
    return word.rsplit("/", 1)[-1].lower()


def _echo_output(argv: list[str]) -> str:
    args = argv[1:]
    interpret = False
    newline = True
    while args and re.fullmatch(r"-[neE]+", args[0]):
        flags = args.pop(0)
        newline = newline and "n" not in flags
        interpret = interpret or "e" in flags
    text = " ".join(args)
    if interpret:
        text = decode_ansi_c(text)
    return text + ("\n" if newline else "")


_PRINTF_CONV_RE = re.compile(r"%%|%[-+ #0]*\d*(?:\.\d+)?([a-zA-Z])")


def _printf_output(args: list[str]) -> str | None:
    """printf with %s/%b/%c/%d conversions only (enough for obfuscation tricks)."""
    if not args:
        return None
    fmt, values = args[0], args[1:]
    pieces = _PRINTF_CONV_RE.split(fmt)
    # split() alternates literal text and conversion letters (None for "%%")
    convs = pieces[1::2]
    if any(c not in (None, "s", "b", "c", "d") for c in convs):
        return None
    n_args = sum(1 for c in convs if c is not None)
    out: list[str] = []
    index = 0
    for _ in range(64):
        for i, piece in enumerate(pieces):
            if i % 2 == 0:
                out.append(decode_ansi_c(piece))
            elif piece is None:
                out.append("%")
            else:
                value = values[index] if index < len(values) else ""
                index += 1
                out.append(
                    decode_ansi_c(value) if piece == "b" else value[:1] if piece == "c" else value
                )
        if n_args == 0 or index >= len(values):
            break
    return "".join(out)


def static_stdout(cmd: SimpleCommand, _depth: int = 0) -> str | None:
    """What cmd prints, when it is knowable without running anything
    (echo/printf of literals, optionally through base64 -d, rev, cat)."""
    if _depth > 8 or not cmd.words or any(w.dynamic for w in cmd.words):
        return None
    name = command_name(cmd.words[0].text)
    argv = cmd.argv
    if name == "echo":
        return _echo_output(argv)
    if name == "printf":
        return _printf_output(argv[1:])
    stdin = static_stdin(cmd, _depth)
    if stdin is None:
        return None
    flags = {a for a in argv[1:] if a.startswith("-")}
    if name == "base64" and flags & {"-d", "--decode", "-D", "-di", "-id"}:
        try:
            return base64.b64decode("".join(stdin.split()), validate=False).decode(
                "utf-8", "replace"
            )
        except (binascii.Error, ValueError):
            return None
    if name == "rev":
        return "\n".join(line[::-1] for line in stdin.split("\n"))
    if name in _PASS_THROUGH and len(argv) == 1:
        return stdin
    return None


def static_stdin(cmd: SimpleCommand, depth: int = 0) -> str | None:
    """What cmd reads on stdin when that is a literal (here-string,
    here-document, or a static producer piped in)."""
    for redirect in cmd.redirects:
        if redirect.op == "<<<" and redirect.target is not None and not redirect.target.dynamic:
            return redirect.target.text + "\n"
        if redirect.op in ("<<", "<<-") and redirect.heredoc is not None:
            return redirect.heredoc
    if cmd.stdin_from is not None:
        return static_stdout(cmd.stdin_from, depth + 1)
    return None


def static_output(script: Script) -> str | None:
    """The output of a substitution whose code is a single static pipeline."""
    if not script.commands or script.subscripts:
        return None
    last = script.commands[-1]
    chain = 1
    node = last
    while node.stdin_from is not None:
        chain += 1
        node = node.stdin_from
    if chain != len(script.commands):
        return None
    return static_stdout(last)


# -- a word with unknown variables assumed unset -----------------------------------

_ASSUME_TOKEN_RE = re.compile(
    r"\$'((?:[^'\\]|\\.)*)'"  # ANSI-C quoting
    r"|'([^']*)'"  # single quotes
    r"|\"((?:[^\"\\]|\\.)*)\""  # double quotes
    r"|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-=+?])((?:[^{}]|\{[^{}]*\})*))?\}"  # ${X}, ${X:-w}
    r"|\$([A-Za-z_][A-Za-z0-9_]*)"  # $X
    r"|\\(.)"  # an escaped character
    r"|([$`])"  # any other expansion: not resolvable
    r"|([^$`'\"\\]+)",  # plain text
    re.S,
)


def assumed_word(raw: str, env: Mapping[str, str] | None, _depth: int = 0) -> str | None:
    """What the source spelling raw of one word reads when every variable
    not in env is unset: ``${X:-rm}`` reads ``rm``, ``r${X}m`` reads ``rm``,
    ``${X:+rm}`` reads ``rm`` (the value it has when X is set). None when
    the word holds an expansion that cannot be resolved (``$(…)``,
    ``${!x}``, ``${x/a/b}``)."""
    if _depth > 4 or len(raw) > 4096:
        return None
    env = env or {}
    out: list[str] = []
    pos = 0
    while pos < len(raw):
        m = _ASSUME_TOKEN_RE.match(raw, pos)
        if m is None or m.group(9) is not None:
            return None
        pos = m.end()
        ansi, single, double, name, op, default, bare, escaped, _, plain = m.groups()
        if ansi is not None:
            out.append(decode_ansi_c(ansi))
        elif single is not None:
            out.append(single)
        elif double is not None:
            inner = assumed_word(double, env, _depth + 1)
            if inner is None:
                return None
            out.append(inner)
        elif name is not None:
            value = env.get(name)
            if op is None:
                out.append(value or "")
                continue
            alt = assumed_word(default or "", env, _depth + 1)
            if alt is None:
                return None
            if op.endswith("+"):  # the alternative when set: assume it is
                out.append("" if op == ":+" and value == "" else alt)
            elif value is None or (op.startswith(":") and not value):
                out.append(alt)
            else:
                out.append(value)
        elif bare is not None:
            out.append(env.get(bare, ""))
        elif escaped is not None:
            out.append(escaped)
        else:
            out.append(plain or "")
    return "".join(out)
