"""A small, linear-time shell parser for deciding what a command would run.

It is not a full POSIX shell grammar; it is the part that matters for safety:

* words with their quotes removed and the expansions we can resolve applied
  (``r''m`` and ``r\\m`` read ``rm``; ``$'\\x72m'`` reads ``rm``; unquoted
  ``$IFS`` splits a word; ``$HOME`` reads ``~``; variables assigned earlier in
  the same command line or given in ``env`` are substituted);
* simple commands split on ``; & && || | |& ( )`` and newlines, with the
  pipeline link kept (``stdin_from``) so ``curl … | sh`` can be recognised;
* redirections as structured data, here-document bodies and here-strings;
* command substitutions (``$(…)``, backticks, also inside double quotes),
  process substitutions and ``${…:-$(…)}`` parsed as code of their own;
* function definitions, so fork bombs can be recognised structurally.

Quoted text never becomes a command or an operator, which is what keeps
``echo "cat f > /dev/sda"`` harmless: the token stream is the "masked copy"
on which position-less rules (redirects, fork bombs) are evaluated.

Limits (segments, tokens, nesting depth) are enforced while parsing so that
adversarial input costs at most a bounded amount of work: going over one
raises `ParseLimitError`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from herald.safety.shell_ast import (
    GLOB_CHARS,
    MAX_DEPTH,
    OP_MARK,
    QUOTED_MARK,
    Budget,
    ParseLimitError,
    Redirect,
    Script,
    SimpleCommand,
    Word,
    expand_braces,
    has_fork_bomb,
)
from herald.safety.static_eval import decode_ansi_c, static_output

_OP_RE = re.compile(
    r"(?P<fd>\d{1,4})?(?P<redir>&>>|&>|>>|>&|>\||<<<|<<-|<<|<>|<&|>|<)"
    r"|(?P<ctl>;;&|;;|;&|&&|\|\||\|&|[;&|()])"
)
_BLANK_RE = re.compile(r"[ \t]+")
# Where an operator can start (a redirection may start with its file descriptor): any
# other character starts a word, so the operator pattern is not tried there.
_OP_START = frozenset("0123456789;&|()<>")
_PLAIN_RE = re.compile(r"[^\s\\'\"$`;&|<>()]+")
_DQ_PLAIN_RE = re.compile(r"[^\"\\$`]+")
_SQ_CONTENT_RE = re.compile(r"[^\\']+|\\.", re.S)
_BT_CONTENT_RE = re.compile(r"[^\\`]+|\\.", re.S)
_PAREN_RE = re.compile(r"[()]")
_BRACE_SCAN_RE = re.compile(r"[\\'{}]")
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ASSIGN_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=")
_WORD_BREAK = frozenset(" \t\n;&|<>()")
# Words that start a compound command and are followed by a command.
_RESERVED = frozenset({"!", "{", "}", "if", "then", "else", "elif", "fi", "do", "done",
                       "while", "until", "esac"})  # fmt: skip
# Words that start a header which is not a command (for x in …; case x in …).
_HEADERS = frozenset({"for", "select", "case", "function", "in"})
_DECLARERS = frozenset({"export", "declare", "local", "readonly", "typeset"})


class _WordBuilder:
    """Accumulates one word; an unquoted expansion with blanks splits it."""

    def __init__(self, start: int) -> None:
        self.start = start
        self.parts: list[str] = []
        self.quoted = self.dynamic = self.glob = self.brace = False
        self.subs: list[Script] = []
        self.done: list[Word] = []
        self.split_pending = False

    def add(self, text: str) -> None:
        self.parts.append(text)

    def add_unquoted_value(self, value: str, src: str, pos: int) -> None:
        """An unquoted expansion: the shell splits it on blanks and globs it."""
        if any(ch in GLOB_CHARS for ch in value):
            self.glob = True
        pieces = value.split()
        if not pieces:
            if value:  # only blanks: acts as a separator
                self.split(src, pos)
            return
        if value[0].isspace():
            self.split(src, pos)
        for i, piece in enumerate(pieces):
            if i:
                self.split(src, pos)
            self.parts.append(piece)
        if value[-1].isspace():
            self.split(src, pos)

    def split(self, src: str, pos: int) -> None:
        if self.parts or self.quoted:
            self.done.append(self._make(src, pos))
        self.parts = []
        self.quoted = self.dynamic = self.glob = self.brace = False
        self.subs = []
        self.start = pos

    def _make(self, src: str, end: int) -> Word:
        return Word(
            text="".join(self.parts),
            raw=src[self.start : end],
            quoted=self.quoted,
            dynamic=self.dynamic,
            glob=self.glob,
            brace=self.brace,
            subs=self.subs,
        )

    def finish(self, src: str, end: int) -> list[Word]:
        if self.parts or self.quoted:
            self.done.append(self._make(src, end))
        return self.done


class _Parser:
    def __init__(self, src: str, budget: Budget, depth: int, variables: dict[str, str]) -> None:
        if depth > MAX_DEPTH:
            raise ParseLimitError(f"code nested more than {MAX_DEPTH} levels deep")
        if depth > 0:
            budget.add_nested()
        self.src = src
        self.n = len(src)
        self.budget = budget
        self.depth = depth
        self.vars = variables
        self.commands: list[SimpleCommand] = []
        self.subscripts: list[Script] = []
        self.comments: list[tuple[int, int]] = []
        self.tokens: list[str] = []
        self.paren = 0
        self._reset()
        self.pipe_prev: SimpleCommand | None = None
        self.pending_redirect: Redirect | None = None
        self.pending_heredocs: list[tuple[Redirect, str, bool, bool]] = []

    def _reset(self) -> None:
        self.cur_words: list[Word] = []
        self.cur_redirects: list[Redirect] = []
        self.cur_start = -1
        self.cur_end = -1

    # -- top level -------------------------------------------------------
    def run(self, pos: int, closer: str | None) -> int:
        src, n = self.src, self.n
        while pos < n:
            c = src[pos]
            if c == " " or c == "\t":
                pos = _BLANK_RE.match(src, pos).end()  # type: ignore[union-attr]
                continue
            if c == "\n":
                self._control("\n", pos, pos + 1)
                pos = self._read_heredocs(pos + 1)
                continue
            if c == "#":
                end = src.find("\n", pos)
                end = n if end < 0 else end
                self.comments.append((pos, end))
                pos = end
                continue
            if c == ")" and closer == ")" and self.paren == 0:
                self._finish()
                return pos + 1
            if c in "<>" and src.startswith("(", pos + 1):
                word, end = self._process_substitution(pos)
                self._add_word(word, pos, end)
                pos = end
                continue
            if c == "(" and src.startswith("((", pos) and not self.cur_words:
                end = self._match_parens(pos)
                self._add_word(Word(text=src[pos:end], raw=src[pos:end], dynamic=True), pos, end)
                pos = end
                continue
            m = _OP_RE.match(src, pos) if c in _OP_START else None
            if m is not None:
                if m.group("redir"):
                    self._redirect(m.group("redir"), m.group("fd") or "", pos, m.end())
                else:
                    self._control(m.group("ctl"), pos, m.end())
                pos = m.end()
                continue
            words, end = self._read_word(pos)
            for word in words:
                self._add_word(word, pos, end)
            pos = end
        self._finish()
        return pos

    def script(self) -> Script:
        return Script(
            commands=self.commands,
            subscripts=self.subscripts,
            fork_bomb=has_fork_bomb(self.tokens),
            comments=self.comments,
        )

    # -- tokens ----------------------------------------------------------
    def _add_word(self, word: Word, start: int, end: int) -> None:
        self.budget.add_token()
        self.tokens.append(word.text if not word.quoted else QUOTED_MARK)
        redirect = self.pending_redirect
        if redirect is not None:
            self.pending_redirect = None
            redirect.target = word
            if redirect.op in ("<<", "<<-"):
                self.pending_heredocs.append(
                    (redirect, word.text, redirect.op == "<<-", not word.quoted)
                )
        else:
            self.cur_words.append(word)
        if self.cur_start < 0:
            self.cur_start = start
        self.cur_end = end

    def _redirect(self, op: str, fd: str, start: int, end: int) -> None:
        self.budget.add_token()
        self.tokens.append(OP_MARK + op)
        redirect = Redirect(op=op, fd=fd)
        self.cur_redirects.append(redirect)
        self.pending_redirect = redirect
        if self.cur_start < 0:
            self.cur_start = start
        self.cur_end = end

    def _control(self, op: str, start: int, end: int) -> None:
        self.budget.add_token()
        self.tokens.append(OP_MARK + op)
        self.pending_redirect = None
        if op == "(":
            self.paren += 1
        elif op == ")" and self.paren > 0:
            self.paren -= 1
        piped = op in ("|", "|&")
        finished = self._finish(piped=piped)
        self.pipe_prev = finished if piped else None

    def _finish(self, *, piped: bool = False) -> SimpleCommand | None:
        words, redirects = self.cur_words, self.cur_redirects
        start, end = self.cur_start, self.cur_end
        self._reset()
        self.pending_redirect = None
        if not words and not redirects:
            return None
        self.budget.add_segment()
        if any(w.brace for w in words):
            words = expand_braces(words)
        i = 0
        while i < len(words) and not words[i].quoted and words[i].text in _RESERVED:
            i += 1
        words = words[i:]
        if words and not words[0].quoted and words[0].text in _HEADERS:
            words = []
        if words and words[0].text == "[[":
            redirects = []  # inside [[ ]], < and > compare strings
        j = 0
        while j < len(words) and _ASSIGN_RE.match(words[j].raw):
            j += 1
        assignments, words = words[:j], words[j:]
        cmd = SimpleCommand(
            words=words,
            assignments=assignments,
            redirects=redirects,
            source=self.src[start:end].strip() if start >= 0 else "",
            stdin_from=self.pipe_prev,
            piped=piped,
        )
        self.commands.append(cmd)
        self._remember_assignments(cmd)
        return cmd

    def _remember_assignments(self, cmd: SimpleCommand) -> None:
        """`X=…` alone (or after export/declare) sets X for the rest of the line."""
        if cmd.words and cmd.words[0].text not in _DECLARERS:
            return
        candidates = cmd.assignments if not cmd.words else cmd.words[1:]
        for word in candidates:
            name, eq, value = word.text.partition("=")
            name = name.rstrip("+")
            if not eq or not _NAME_RE.fullmatch(name):
                continue
            if word.dynamic:
                self.vars.pop(name, None)
            else:
                self.vars[name] = value

    def _read_heredocs(self, pos: int) -> int:
        pending, self.pending_heredocs = self.pending_heredocs, []
        src, n = self.src, self.n
        for redirect, delimiter, strip_tabs, expands in pending:
            start = pos
            end = n
            while pos < n:
                nl = src.find("\n", pos)
                line_end = n if nl < 0 else nl
                line = src[pos:line_end]
                if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                    end = pos
                    pos = min(line_end + 1, n)
                    break
                pos = line_end + 1
            else:
                pos = n
            body = src[start:end]
            redirect.heredoc = body
            if expands and ("$" in body or "`" in body):
                self._scan_expansions(body)
        return pos

    def _scan_expansions(self, text: str) -> None:
        """Collect the command substitutions of text read as in double quotes."""
        sub = _Parser(text, self.budget, self.depth + 1, dict(self.vars))
        builder = _WordBuilder(0)
        sub._read_dq(0, builder, stop_at_quote=False)
        self.subscripts.extend(sub.subscripts)

    # -- words -----------------------------------------------------------
    def _read_word(self, pos: int) -> tuple[list[Word], int]:
        src, n = self.src, self.n
        m = _PLAIN_RE.match(src, pos)
        if m is not None and (m.end() >= n or src[m.end()] in _WORD_BREAK):
            # Most words are one plain run (no quotes, escapes or expansions): made
            # directly, with the same flags the builder below would give them.
            chunk = m.group()
            glob = "*" in chunk or "?" in chunk or "[" in chunk
            return [Word(text=chunk, raw=chunk, glob=glob, brace="{" in chunk)], m.end()
        return self._read_word_built(pos)

    def _read_word_built(self, pos: int) -> tuple[list[Word], int]:
        src, n = self.src, self.n
        builder = _WordBuilder(pos)
        while pos < n:
            c = src[pos]
            if c in _WORD_BREAK:
                break
            if c == "\\":
                if pos + 1 < n and src[pos + 1] != "\n":
                    builder.add(src[pos + 1])
                    builder.quoted = True
                pos += 2
            elif c == "'":
                end = src.find("'", pos + 1)
                end = n if end < 0 else end
                builder.add(src[pos + 1 : end])
                builder.quoted = True
                pos = end + 1
            elif c == '"':
                builder.quoted = True
                pos = self._read_dq(pos + 1, builder, stop_at_quote=True)
            elif c == "$":
                pos = self._read_dollar(pos, builder, in_dq=False)
            elif c == "`":
                pos = self._read_backticks(pos, builder, in_dq=False)
            else:
                m = _PLAIN_RE.match(src, pos)
                if m is None:  # a lone character the pattern excludes
                    builder.add(c)
                    pos += 1
                    continue
                chunk = m.group()
                if "*" in chunk or "?" in chunk or "[" in chunk:
                    builder.glob = True
                if "{" in chunk:
                    builder.brace = True
                builder.add(chunk)
                pos = m.end()
        pos = min(pos, n)
        return builder.finish(src, pos), pos

    def _read_dq(self, pos: int, builder: _WordBuilder, *, stop_at_quote: bool) -> int:
        src, n = self.src, self.n
        while pos < n:
            c = src[pos]
            if c == '"':
                if stop_at_quote:
                    return pos + 1
                builder.add(c)
                pos += 1
            elif c == "\\":
                nxt = src[pos + 1] if pos + 1 < n else ""
                if nxt in ("$", "`", '"', "\\"):
                    builder.add(nxt)
                    pos += 2
                elif nxt == "\n":
                    pos += 2
                else:
                    builder.add("\\")
                    pos += 1
            elif c == "$":
                pos = self._read_dollar(pos, builder, in_dq=True)
            elif c == "`":
                pos = self._read_backticks(pos, builder, in_dq=True)
            else:
                m = _DQ_PLAIN_RE.match(src, pos)
                assert m is not None
                builder.add(m.group())
                pos = m.end()
        return n

    def _lookup(self, name: str) -> str | None:
        if name in self.vars:
            return self.vars[name]
        if name == "HOME":
            return "~"
        return None

    def _expanded(self, builder: _WordBuilder, value: str, in_dq: bool, pos: int) -> None:
        if in_dq:
            builder.add(value)
        else:
            builder.add_unquoted_value(value, self.src, pos)

    def _read_dollar(self, pos: int, builder: _WordBuilder, *, in_dq: bool) -> int:
        src, n = self.src, self.n
        nxt = src[pos + 1] if pos + 1 < n else ""
        if nxt == "'" and not in_dq:
            return self._read_ansi_c(pos, builder)
        if nxt == '"' and not in_dq:
            builder.quoted = True
            return self._read_dq(pos + 2, builder, stop_at_quote=True)
        if nxt == "(":
            if src.startswith("((", pos + 1):
                end = self._match_parens(pos + 1)
                builder.add(src[pos:end])
                builder.dynamic = True
                return end
            sub = _Parser(src, self.budget, self.depth + 1, dict(self.vars))
            end = sub.run(pos + 2, ")")
            script = sub.script()
            self.subscripts.append(script)
            builder.subs.append(script)
            value = static_output(script)
            if value is None:
                builder.add(src[pos:end])
                builder.dynamic = True
            else:
                self._expanded(builder, value.rstrip("\n"), in_dq, end)
            return end
        if nxt == "{":
            end = self._match_brace(pos + 1)
            inner = src[pos + 2 : end - 1]
            name_match = _NAME_RE.match(inner)
            name = name_match.group() if name_match else ""
            if name == "IFS" and not in_dq:
                builder.split(src, pos)
                builder.start = end
                return end
            if name == "IFS" and inner == "IFS":
                builder.add(" ")
                return end
            value = (
                self._lookup(name)
                if name and name_match and name_match.end() == len(inner)
                else None
            )
            if value is not None:
                self._expanded(builder, value, in_dq, end)
            else:
                builder.add(src[pos:end])
                builder.dynamic = True
                if "$" in inner or "`" in inner:
                    self._scan_expansions(inner)
            return end
        m = _NAME_RE.match(src, pos + 1)
        if m is not None:
            name = m.group()
            if name == "IFS":
                if in_dq:
                    builder.add(" ")
                else:
                    builder.split(src, pos)
                    builder.start = m.end()
                return m.end()
            value = self._lookup(name)
            if value is None:
                builder.add(src[pos : m.end()])
                builder.dynamic = True
            else:
                self._expanded(builder, value, in_dq, m.end())
            return m.end()
        if nxt and nxt in "123456789@*":
            return pos + 2  # positional parameters are empty in a one-off command
        if nxt and nxt in "0#?$!-":
            builder.add(src[pos : pos + 2])
            builder.dynamic = True
            return pos + 2
        builder.add("$")
        return pos + 1

    def _read_ansi_c(self, pos: int, builder: _WordBuilder) -> int:
        src, n = self.src, self.n
        i = pos + 2
        while i < n:
            m = _SQ_CONTENT_RE.match(src, i)
            if m is None:
                break  # at the closing quote
            i = m.end()
        builder.add(decode_ansi_c(src[pos + 2 : i]))
        builder.quoted = True
        return min(i + 1, n)

    def _read_backticks(self, pos: int, builder: _WordBuilder, *, in_dq: bool) -> int:
        src, n = self.src, self.n
        i = pos + 1
        while i < n:
            m = _BT_CONTENT_RE.match(src, i)
            if m is None:
                break  # at the closing backtick
            i = m.end()
        end = min(i, n)
        inner = re.sub(r"\\([$`\\\"])" if in_dq else r"\\([$`\\])", r"\1", src[pos + 1 : end])
        sub = _Parser(inner, self.budget, self.depth + 1, dict(self.vars))
        sub.run(0, None)
        script = sub.script()
        self.subscripts.append(script)
        builder.subs.append(script)
        value = static_output(script)
        if value is None:
            builder.add(src[pos : end + 1])
            builder.dynamic = True
        else:
            self._expanded(builder, value.rstrip("\n"), in_dq, end + 1)
        return min(end + 1, n)

    def _process_substitution(self, pos: int) -> tuple[Word, int]:
        sub = _Parser(self.src, self.budget, self.depth + 1, dict(self.vars))
        end = sub.run(pos + 2, ")")
        script = sub.script()
        self.subscripts.append(script)
        raw = self.src[pos:end]
        return Word(text=raw, raw=raw, dynamic=True, procsub=True, subs=[script]), end

    def _match_parens(self, pos: int) -> int:
        """End of the balanced (…) group starting at pos (quotes ignored)."""
        depth = 0
        for m in _PAREN_RE.finditer(self.src, pos):
            depth += 1 if m.group() == "(" else -1
            if depth == 0:
                return m.end()
        return self.n

    def _match_brace(self, pos: int) -> int:
        """End of the balanced {…} group starting at pos, skipping quotes."""
        depth = 0
        src, n = self.src, self.n
        i = pos
        while i < n:
            m = _BRACE_SCAN_RE.search(src, i)
            if m is None:
                return n
            c = m.group()
            i = m.end()
            if c == "\\":
                i += 1
            elif c == "'":
                j = src.find("'", i)
                i = n if j < 0 else j + 1
            elif c == "{":
                depth += 1
                if depth > MAX_DEPTH + 2:  # ${X:-${X:-…}} past the nesting limit
                    raise ParseLimitError(f"expansions nested more than {MAX_DEPTH} levels deep")
            else:
                depth -= 1
                if depth == 0:
                    return i
        return n


# -- entry points -------------------------------------------------------------


def parse(
    src: str,
    *,
    env: Mapping[str, str] | None = None,
    budget: Budget | None = None,
    depth: int = 0,
) -> Script:
    """Parse src (already normalised). Raises ParseLimitError past the limits."""
    parser = _Parser(src, budget or Budget(), depth, dict(env or {}))
    parser.run(0, None)
    return parser.script()


def strip_comments(command: str) -> str:
    """The command without its shell comments (quoted `#` is kept)."""
    try:
        parser = _Parser(command, Budget(), 0, {})
        parser.run(0, None)
    except ParseLimitError:
        return command
    out: list[str] = []
    last = 0
    for start, end in parser.comments:
        out.append(command[last:start])
        last = end
    out.append(command[last:])
    return "\n".join(line.rstrip() for line in "".join(out).split("\n")).strip()
