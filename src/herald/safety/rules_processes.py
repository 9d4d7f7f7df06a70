"""Rules for killing processes by pattern: ``pkill``/``killall``/``kill
$(pgrep …)`` whose pattern also matches Herald's own gateway however it was
started (``herald``, ``python3 -m herald``, ``pkill -f python``), or matches
session and system processes or nearly everything (``pkill -f sh``,
``killall -9 bash``, ``pkill -f .``).

The pattern is tried against sample process tables (see
:mod:`herald.safety.effects`), so the judgement follows what the pattern
matches, not how it is spelled.
"""

from __future__ import annotations

from herald.safety.effects import pattern_reaches
from herald.safety.invocation import Context, Invocation, parse_options
from herald.safety.long_options import expand_long
from herald.safety.shell_ast import SimpleCommand, Word
from herald.safety.static_eval import command_name

GATEWAY = "dangerous.herald_gateway"
KILL_BROAD = "dangerous.kill_broad"

_PKILL_LONG = {o: o for o in ("--full", "--signal", "--exact", "--ignore-case", "--newest",
                              "--oldest", "--parent", "--pgroup", "--group", "--session",
                              "--terminal", "--euid", "--uid", "--inverse", "--echo",
                              "--count", "--pidfile", "--logpidfile", "--ns", "--nslist",
                              "--older", "--cgroup", "--env", "--require-handler", "--list-name",
                              "--list-full", "--delimiter", "--lightweight", "--runstates",
                              "--queue", "--help", "--version", "--younger", "--regexp",
                              "--interactive", "--wait", "--quiet", "--verbose", "--user",
                              "--process-group", "--older-than", "--younger-than", "--ignore-case",
                              "--list")}  # fmt: skip
_VALUES = "gGPstuUFn"
_LONG_VALUES = frozenset({"--signal", "--parent", "--pgroup", "--group", "--session", "--terminal",
                          "--euid", "--uid", "--pidfile", "--ns", "--nslist", "--older",
                          "--cgroup", "--env", "--delimiter", "--runstates", "--user",
                          "--older-than", "--younger-than", "--process-group"})  # fmt: skip
_KILL_SIGNALS = frozenset({"9", "KILL", "SIGKILL", "sigkill", "kill"})


def _pattern_options(words: list[Word], name: str) -> tuple[list[str], set[str], str]:
    texts = [expand_long(w.text.split("=", 1)[0], _PKILL_LONG) + (
        "=" + w.text.split("=", 1)[1] if "=" in w.text else "") if w.text.startswith("--") else w.text
        for w in words]  # fmt: skip
    signal = ""
    kept: list[Word] = []
    for word, text in zip(words, texts, strict=True):
        if text.startswith("-") and len(text) > 1 and not text.startswith("--"):
            body = text[1:]
            if body.isdigit() or body.upper().removeprefix("SIG") in ("KILL", "TERM", "HUP", "INT",
                                                                        "QUIT", "USR1", "USR2",
                                                                        "STOP", "ABRT"):  # fmt: skip
                signal = body
                continue
        kept.append(Word(text=text, raw=word.raw))
    short = "suoyZn" if name == "killall" else _VALUES
    opts = parse_options(
        kept, short_values=short, long_values=_LONG_VALUES, stop_at_positional=False
    )
    signal = signal or opts.value("--signal", "-s") or ""
    flags = {f for f, _ in opts.flags}
    return [w.text for w in opts.positional], flags, signal


def _judge_patterns(
    patterns: list[str], *, full: bool, exact: bool, ignore_case: bool, heavy: bool,
    tool: str, segment: str, ctx: Context,
) -> None:  # fmt: skip
    for pattern in patterns:
        reach = pattern_reaches(pattern, full=full, exact=exact, ignore_case=ignore_case)
        if reach == "herald":
            ctx.approval(
                GATEWAY,
                f"kills every process matching '{pattern}', Herald's own gateway included ({tool})",
                segment,
            )
            return
        if reach == "broad" and heavy:
            ctx.approval(
                KILL_BROAD,
                f"kills every process matching '{pattern}': sessions and system services too ({tool})",
                segment,
            )
            return


def rule_pattern_kill(inv: Invocation, ctx: Context) -> None:
    """pkill / killall / pgrep-less kill by name."""
    patterns, flags, signal = _pattern_options(inv.arg_words, inv.name)
    if signal == "0" or flags & {"-l", "--list", "--help", "-V", "--version"}:
        return
    full = inv.name == "pkill" and bool(flags & {"-f", "--full"})
    exact = inv.name == "killall" and not flags & {"-r", "--regexp"}
    heavy = inv.name == "killall" or full or signal.upper().removeprefix("SIG") in ("9", "KILL")
    _judge_patterns(
        patterns, full=full, exact=exact, ignore_case=bool(flags & {"-i", "--ignore-case"}),
        heavy=heavy, tool=inv.name, segment=inv.segment, ctx=ctx,
    )  # fmt: skip


def _lookup_patterns(cmd: SimpleCommand) -> list[tuple[str, bool, bool]]:
    """(pattern, full, exact) for a pgrep / pidof command."""
    if not cmd.words:
        return []
    name = command_name(cmd.words[0].text)
    if name in ("grep", "egrep", "rg"):  # ps aux | grep PATTERN: whole command lines
        texts = [w.text for w in cmd.words[1:]]
        if any(t.startswith("-") and "v" in t[1:] and not t.startswith("--") for t in texts):
            return []
        pattern = next((t for t in texts if not t.startswith("-")), "")
        return [(pattern, True, False)] if pattern else []
    if name == "pidof":
        return [(w.text, False, True) for w in cmd.words[1:] if not w.text.startswith("-")]
    if name != "pgrep":
        return []
    patterns, flags, _ = _pattern_options(cmd.words[1:], "pkill")
    full = bool(flags & {"-f", "--full"})
    return [(p, full, bool(flags & {"-x", "--exact"})) for p in patterns]


def rule_kill_lookup(inv: Invocation, ctx: Context) -> None:
    """kill $(pgrep -f gateway), pgrep python | xargs kill -9."""
    found: list[tuple[str, bool, bool]] = []
    for word in inv.arg_words:
        for sub in word.subs:
            for cmd in sub.commands:
                found.extend(_lookup_patterns(cmd))
    source = inv.cmd.stdin_from if inv.extra_args else None
    for _ in range(6):  # pgrep … | xargs kill, ps aux | grep x | awk … | xargs kill
        if source is None:
            break
        found.extend(_lookup_patterns(source))
        source = source.stdin_from
    heavy = any(a in ("-9", "-KILL", "-SIGKILL", "-s9") for a in inv.args)
    for pattern, full, exact in found:
        _judge_patterns(
            [pattern], full=full, exact=exact, ignore_case=False, heavy=heavy or full,
            tool=f"kill via {'pidof' if exact else 'pgrep'}", segment=inv.segment, ctx=ctx,
        )  # fmt: skip
