"""What the rules work on: one command invocation, the findings collected so
far, and a small option parser shared by the rules and the wrapper table."""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from herald.safety.shell_ast import Budget, SimpleCommand, Word
from herald.safety.static_eval import command_name

Level = Literal["hardline", "approval"]


@dataclass(frozen=True)
class Hit:
    level: Level
    rule: str
    description: str
    segment: str


@dataclass
class Context:
    """State of one check: findings, limits, and how to check nested code."""

    env: Mapping[str, str] | None
    budget: Budget
    depth: int = 0
    hits: list[Hit] = field(default_factory=list)
    segments: list[str] = field(default_factory=list)  # every simple command seen
    cwd: str | None = None  # working directory when known (env PWD, an earlier cd)
    payloads: int = 0  # carrier payloads checked (a sign of a compound command)
    # Set by the checker: check_code(text, segment, ctx) checks text as a
    # command; check_invocation(inv, ctx) runs every rule on an invocation.
    check_code: Callable[[str, str, Context], None] | None = None
    check_invocation: Callable[[Invocation, Context], None] | None = None

    def resolve(self, path: str) -> str:
        """path joined to the known working directory when it is relative."""
        if self.cwd is None or not path or path.startswith(("/", "~", "$")):
            return path
        return posixpath.join(self.cwd, path)

    def change_directory(self, target: str | None) -> None:
        """Follow `cd target` (None: back to an unknown directory)."""
        if target is None or target == "-" or "$" in target:
            self.cwd = None
        elif target.startswith(("/", "~")):
            self.cwd = target
        elif self.cwd is not None:
            self.cwd = posixpath.join(self.cwd, target)

    def hardline(self, rule: str, description: str, segment: str) -> None:
        self.hits.append(Hit("hardline", rule, description, segment))

    def approval(self, rule: str, description: str, segment: str) -> None:
        self.hits.append(Hit("approval", rule, description, segment))

    def code(self, text: str, segment: str) -> None:
        """Check text (a carrier's payload) as a command in its own right."""
        if self.check_code is not None and text.strip():
            self.payloads += 1
            self.check_code(text, segment, self)

    def invocation(self, inv: Invocation) -> None:
        """Run every rule on a command found inside another (find -exec)."""
        if self.check_invocation is not None and inv.words:
            self.check_invocation(inv, self)


@dataclass
class Invocation:
    """A command after wrappers (sudo, env, timeout …) are peeled off."""

    words: list[Word]
    cmd: SimpleCommand  # the segment it came from (redirects, pipeline)
    extra_args: bool = False  # xargs / find -exec append arguments we cannot see
    implied_targets: list[str] = field(default_factory=list)  # find start paths
    # What several rules derive from the same words (write_targets): computed once.
    memo: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)
    # The command's name and its arguments' texts, asked by nearly every rule (a
    # hundred thousand times over a bench corpus). `words` is never changed once an
    # invocation is made (`dataclasses.replace` makes a new one), so they are worked
    # out once, here, rather than through a cached_property, whose lock costs more
    # than the lookup.
    name: str = field(init=False, repr=False, compare=False)
    args: list[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        words = self.words
        self.name = command_name(words[0].text) if words else ""
        self.args = [w.text for w in words[1:]]

    @property
    def arg_words(self) -> list[Word]:
        return self.words[1:]

    @property
    def segment(self) -> str:
        return self.cmd.source or " ".join(w.text for w in self.words)


@dataclass
class Options:
    flags: list[tuple[str, str | None]]  # ("-u", "root"), ("-S", None), ("--user", "x")
    positional: list[Word]
    rest_index: int  # index (into the parsed list) of the first positional

    def has(self, *names: str) -> bool:
        return any(flag in names for flag, _ in self.flags)

    def value(self, *names: str) -> str | None:
        for flag, value in self.flags:
            if flag in names:
                return value
        return None

    def values(self, *names: str) -> list[str]:
        return [v for f, v in self.flags if f in names and v is not None]


def parse_options(
    words: list[Word],
    *,
    short_values: Iterable[str] = (),
    long_values: Iterable[str] = (),
    stop_at_positional: bool = True,
) -> Options:
    """Split getopt-style options from operands.

    short_values: letters whose option takes a value ("u" for -u ROOT, -uROOT);
    long_values: long options taking a value as the next word (--user ROOT);
    --opt=value always carries its value. Clusters (-rf) are split into
    letters. With stop_at_positional, parsing ends at the first operand
    (POSIX); otherwise options after operands are collected too (GNU).
    """
    takes = set(short_values)
    long_takes = set(long_values)
    flags: list[tuple[str, str | None]] = []
    positional: list[Word] = []
    rest_index = -1
    i = 0
    n = len(words)
    while i < n:
        text = words[i].text
        if text == "--":
            if rest_index < 0:
                rest_index = i + 1
            positional.extend(words[i + 1 :])
            break
        if not text.startswith("-") or text == "-":
            if rest_index < 0:
                rest_index = i
            if stop_at_positional:
                positional.extend(words[i:])
                break
            positional.append(words[i])
            i += 1
            continue
        if text.startswith("--"):
            key, eq, value = text.partition("=")
            if eq:
                flags.append((key, value))
            elif key in long_takes and i + 1 < n:
                flags.append((key, words[i + 1].text))
                i += 1
            else:
                flags.append((key, None))
            i += 1
            continue
        j = 1
        while j < len(text):
            letter = text[j]
            if letter in takes:
                if j + 1 < len(text):
                    flags.append(("-" + letter, text[j + 1 :]))
                elif i + 1 < n:
                    flags.append(("-" + letter, words[i + 1].text))
                    i += 1
                else:
                    flags.append(("-" + letter, None))
                break
            flags.append(("-" + letter, None))
            j += 1
        i += 1
    if rest_index < 0:
        rest_index = n
    return Options(flags=flags, positional=positional, rest_index=rest_index)


# git's options that take a value before the subcommand (git -C dir status).
GIT_GLOBAL_VALUES = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace",
                               "--config-env", "--super-prefix"})  # fmt: skip


def git_subcommand(args: list[str]) -> tuple[str, list[str]] | None:
    """(subcommand, its arguments) of a git invocation's `args`, past git's own
    options; None when there is no subcommand."""
    i = 0
    while i < len(args) and args[i].startswith("-"):
        i += 2 if args[i] in GIT_GLOBAL_VALUES else 1
    if i >= len(args):
        return None
    return args[i], args[i + 1 :]
