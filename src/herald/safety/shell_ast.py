"""The data the shell parser produces (see :mod:`herald.safety.shell_lex`),
its work limits, and two helpers on parsed words and tokens: bash-style brace
expansion (``{rm,-rf,/}``) and structural fork-bomb detection."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

MAX_SEGMENTS = 1024  # simple commands, counting nested code
MAX_TOKENS = 8192  # words and operators, counting nested code
MAX_NESTED = 1024  # substitutions and carrier payloads parsed
MAX_DEPTH = 8  # nesting of substitutions and shell carriers
MAX_BRACE_WORDS = 64


class ParseLimitError(Exception):
    """The command is too large or too deeply nested to analyse."""


@dataclass(slots=True)
class Budget:
    """Work counters shared by one check (all nesting levels)."""

    segments: int = 0
    tokens: int = 0
    nested: int = 0

    def add_segment(self) -> None:
        self.segments += 1
        if self.segments > MAX_SEGMENTS:
            raise ParseLimitError(f"more than {MAX_SEGMENTS} command segments")

    def add_nested(self) -> None:
        self.nested += 1
        if self.nested > MAX_NESTED:
            raise ParseLimitError(f"more than {MAX_NESTED} substitutions or nested commands")

    def add_token(self) -> None:
        self.tokens += 1
        if self.tokens > MAX_TOKENS:
            raise ParseLimitError(f"more than {MAX_TOKENS} words and operators")


@dataclass(slots=True)
class Word:
    text: str  # value after quote removal and the expansions we could resolve
    raw: str  # the source spelling
    quoted: bool = False  # part of it was quoted or backslash-escaped
    dynamic: bool = False  # holds an expansion whose value is unknown
    glob: bool = False  # unquoted glob characters
    brace: bool = False  # unquoted "{" (brace expansion candidate)
    procsub: bool = False  # the word is a <(…) or >(…) process substitution
    subs: list[Script] = field(default_factory=list)


@dataclass(slots=True)
class Redirect:
    op: str
    fd: str
    target: Word | None = None
    heredoc: str | None = None  # body of << and <<-


@dataclass(slots=True)
class SimpleCommand:
    words: list[Word]
    assignments: list[Word]
    redirects: list[Redirect]
    source: str
    stdin_from: SimpleCommand | None = None
    piped: bool = False  # stdout goes to the next command of a pipeline

    @property
    def argv(self) -> list[str]:
        return [w.text for w in self.words]


@dataclass
class Script:
    commands: list[SimpleCommand]
    subscripts: list[Script]
    fork_bomb: bool = False
    comments: list[tuple[int, int]] = field(default_factory=list)

    def walk(self) -> Iterator[SimpleCommand]:
        """Every simple command, including those inside substitutions."""
        yield from self.commands
        for sub in self.subscripts:
            yield from sub.walk()


# -- helpers on parsed words and tokens -------------------------------------------

GLOB_CHARS = frozenset("*?[")
OP_MARK = "\x00"  # prefix of operator entries in a parser's token list
QUOTED_MARK = "\x01"  # token-list entry standing for a quoted word
_SPAWN_OPS = frozenset({OP_MARK + "|", OP_MARK + "&", OP_MARK + "|&"})
_BRACE_RE = re.compile(r"\{([^{}\s]*,[^{}\s]*)\}")


def expand_braces(words: list[Word]) -> list[Word]:
    """Apply bash brace expansion ({a,b}) to unquoted words, as the shell
    would before running the command; past MAX_BRACE_WORDS results the word
    is kept whole and marked dynamic."""
    out: list[Word] = []
    for word in words:
        if not word.brace or not _BRACE_RE.search(word.text):
            out.append(word)
            continue
        texts = [word.text]
        for _ in range(8):
            expanded: list[str] = []
            changed = False
            for text in texts:
                m = _BRACE_RE.search(text)
                if m is None:
                    expanded.append(text)
                    continue
                changed = True
                head, tail = text[: m.start()], text[m.end() :]
                expanded.extend(head + alt + tail for alt in m.group(1).split(","))
            texts = expanded
            if not changed or len(texts) > MAX_BRACE_WORDS:
                break
        if len(texts) > MAX_BRACE_WORDS:
            out.append(dataclasses.replace(word, dynamic=True))
            continue
        out.extend(
            Word(text=t, raw=word.raw, quoted=word.quoted, dynamic=word.dynamic,
                 glob=word.glob or any(ch in GLOB_CHARS for ch in t), subs=word.subs)
            for t in texts if t
        )  # fmt: skip
    return out


def has_fork_bomb(tokens: list[str]) -> bool:
    """`name() { name | name & }` (any name): a function that spawns itself twice."""
    for i in range(1, len(tokens) - 1):
        if tokens[i] != OP_MARK + "(" or tokens[i + 1] != OP_MARK + ")":
            continue
        name = tokens[i - 1]
        if name.startswith(OP_MARK) or name == QUOTED_MARK:
            continue
        if _calls_itself_twice(name, tokens[i + 2 : i + 66]):
            return True
    for i in range(len(tokens) - 2):
        if tokens[i] == "function" and _calls_itself_twice(tokens[i + 1], tokens[i + 2 : i + 66]):
            return True
    return False


def _calls_itself_twice(name: str, body: list[str]) -> bool:
    if name.startswith(OP_MARK) or name == QUOTED_MARK:
        return False
    return body.count(name) >= 2 and any(t in _SPAWN_OPS for t in body)
