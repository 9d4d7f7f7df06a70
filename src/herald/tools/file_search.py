"""The engines behind `search_files`: ripgrep run through the environment, a
pure-Python walk for local environments, and grep/find for remote ones without rg.

All three skip `IGNORED_DIRS` and binary files, include hidden files, and
take globs with .gitignore semantics (a glob without '/' matches a file name
at any depth; one with '/' is anchored at the search root; '**' crosses
directories). rg and the Python walk visit paths in the same sorted order, so
they return the same results, bounds included; rg also honours .gitignore files.
"""

from __future__ import annotations

import os
import re
import shlex
import threading
import weakref
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from herald.environments import Environment

IGNORED_DIRS = (
    ".git",
    ".hg",
    ".svn",
    "node_modules",
    ".venv",
    "venv",
    "__pycache__",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".tox",
)
MAX_LINE_CHARS = 300
COMMAND_TIMEOUT = 60.0
_SNIFF_BYTES = 8192
_FIND_RAW_LIMIT = 20_000  # lines of find output read before filtering

_rg_cache: weakref.WeakKeyDictionary[Environment, bool] = weakref.WeakKeyDictionary()
_rg_lock = threading.Lock()


class SearchError(ValueError):
    """The search could not run (bad regex, tool failure); the message is for the model."""


@dataclass(frozen=True)
class LineMatch:
    path: str  # absolute
    line: int
    text: str


@dataclass
class SearchOutcome:
    matches: list[LineMatch] = field(default_factory=list)  # content mode
    files: list[str] = field(default_factory=list)  # files mode (absolute paths)
    truncated: bool = False  # more results exist than were collected
    engine: str = "python"
    notes: list[str] = field(default_factory=list)


def clip(text: str) -> str:
    text = text.rstrip("\r\n")
    return text if len(text) <= MAX_LINE_CHARS else text[:MAX_LINE_CHARS] + "…"


def rg_available(env: Environment) -> bool:
    """Whether `rg` runs on `env` (checked once per environment)."""
    with _rg_lock:
        if env in _rg_cache:
            return _rg_cache[env]
    try:
        result = env.execute("command -v rg >/dev/null 2>&1 && rg --version", cwd=None, timeout=15)
        found = result.exit_code == 0 and result.output.startswith("ripgrep")
    except Exception:
        found = False
    with _rg_lock:
        _rg_cache[env] = found
    return found


# ---------------------------------------------------------------- globs


def glob_regex(pattern: str) -> tuple[re.Pattern[str], bool]:
    """A regex for a .gitignore-style glob, and whether it is anchored (matched against
    the path relative to the root rather than the file name)."""
    pattern = pattern.strip()
    anchored = "/" in pattern.rstrip("/")
    pattern = pattern.lstrip("/")
    out: list[str] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if ch == "*":
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        elif ch == "[":
            end = pattern.find("]", i + 2)
            if end == -1:
                out.append(re.escape(ch))
            else:
                body = pattern[i + 1 : end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body.replace(chr(92), chr(92) * 2)}]")
                i = end
        elif ch == "{" and "}" in pattern[i:]:
            end = pattern.index("}", i)
            options = pattern[i + 1 : end].split(",")
            out.append("(?:" + "|".join(re.escape(o) for o in options) + ")")
            i = end
        else:
            out.append(re.escape(ch))
        i += 1
    return re.compile("".join(out) + r"\Z"), anchored


def glob_matches(compiled: tuple[re.Pattern[str], bool], rel_path: str) -> bool:
    regex, anchored = compiled
    target = rel_path if anchored else rel_path.rsplit("/", 1)[-1]
    return regex.match(target) is not None


# ---------------------------------------------------------------- python walk


def _sorted_entries(directory: str) -> Iterator[os.DirEntry[str]]:
    try:
        with os.scandir(directory) as it:
            return iter(sorted(it, key=lambda e: e.name))
    except OSError:
        return iter(())


def walk_files(root: str, cancel: threading.Event | None = None) -> Iterator[tuple[str, str]]:
    """(absolute path, path relative to root) of every regular file under `root`, in
    the order rg's --sort=path visits them; symlinks are not followed (as in rg)."""
    if os.path.isfile(root):
        yield root, os.path.basename(root)
        return
    stack: list[tuple[Iterator[os.DirEntry[str]], str]] = [(_sorted_entries(root), "")]
    while stack:
        if cancel is not None and cancel.is_set():
            return
        entries, rel = stack[-1]
        entry = next(entries, None)
        if entry is None:
            stack.pop()
            continue
        child_rel = f"{rel}/{entry.name}" if rel else entry.name
        try:
            if entry.is_symlink():
                continue
            if entry.is_dir(follow_symlinks=False):
                if entry.name not in IGNORED_DIRS:
                    stack.append((_sorted_entries(entry.path), child_rel))
            elif entry.is_file(follow_symlinks=False):
                yield entry.path, child_rel
        except OSError:
            continue


def _text_lines(path: str) -> Iterator[str] | None:
    """The file's lines, or None when it looks binary (NUL in the first block)."""
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed by the generator below
    except OSError:
        return None
    head = handle.read(_SNIFF_BYTES)
    if b"\x00" in head:
        handle.close()
        return None
    handle.seek(0)

    def lines() -> Iterator[str]:
        with handle:
            for raw in handle:
                if b"\x00" in raw:
                    return  # rg stops at the first NUL it meets, too
                yield raw.decode("utf-8", errors="replace")

    return lines()


def python_search(
    root: str,
    mode: str,
    pattern: str,
    glob: str | None,
    limit: int,
    cancel: threading.Event | None = None,
) -> SearchOutcome:
    outcome = SearchOutcome(engine="python")
    name_glob = (
        glob_regex(pattern if mode == "files" else glob) if (mode == "files" or glob) else None
    )
    if mode == "files":
        for path, rel in walk_files(root, cancel):
            if name_glob is None or glob_matches(name_glob, rel):
                if len(outcome.files) == limit:
                    outcome.truncated = True
                    break
                outcome.files.append(path)
        return outcome
    try:
        regex = re.compile(pattern)
    except re.error as exc:
        raise SearchError(f"invalid regex {pattern!r}: {exc}") from None
    for path, rel in walk_files(root, cancel):
        if name_glob is not None and not glob_matches(name_glob, rel):
            continue
        lines = _text_lines(path)
        if lines is None:
            continue
        for number, line in enumerate(lines, 1):
            if regex.search(line.rstrip("\r\n")):
                if len(outcome.matches) == limit:
                    outcome.truncated = True
                    return outcome
                outcome.matches.append(LineMatch(path, number, clip(line)))
    return outcome


# ---------------------------------------------------------------- ripgrep


def _split_root(env: Environment, root: str) -> tuple[str, str]:
    """(cwd, target) for a command: rg anchors globs at its working directory."""
    info = env.stat(root)
    if info is not None and not info.is_dir:
        parent, _, name = root.rpartition("/")
        return parent or "/", name
    return root, "."


def _join(cwd: str, printed: str) -> str:
    if printed.startswith("./"):
        printed = printed[2:]
    if printed.startswith("/"):
        return printed
    return f"{cwd.rstrip('/')}/{printed}" if printed != "." else cwd


def rg_search(
    env: Environment,
    root: str,
    mode: str,
    pattern: str,
    glob: str | None,
    limit: int,
    cancel: threading.Event | None = None,
) -> SearchOutcome:
    cwd, target = _split_root(env, root)
    # Later globs win in rg, so the ignored directories come after the caller's glob.
    ignores = " ".join(f"-g {shlex.quote('!' + d)}" for d in IGNORED_DIRS)
    base = "rg --hidden --sort=path --color=never"
    if mode == "files":
        command = f"{base} --files -g {shlex.quote(pattern)} {ignores} -- {shlex.quote(target)}"
    else:
        extra = f" -g {shlex.quote(glob)}" if glob else ""
        command = (
            f"{base} --null --with-filename --line-number --no-heading "
            f"--max-columns={MAX_LINE_CHARS} --max-columns-preview{extra} {ignores} "
            f"-e {shlex.quote(pattern)} -- {shlex.quote(target)}"
        )
    result = env.execute(
        f"{command} 2>&1 | head -n {limit + 1}", cwd=cwd, timeout=COMMAND_TIMEOUT, cancel=cancel
    )
    outcome = SearchOutcome(engine="rg")
    errors: list[str] = []
    for row in result.output.split("\n"):
        if not row:
            continue
        if mode == "files":
            if row.startswith(("rg: ", "error:")) or row.startswith("regex parse error"):
                errors.append(row)
            else:
                outcome.files.append(_join(cwd, row.rstrip("\r")))
            continue
        path, sep, rest = row.partition("\x00")
        number, colon, text = rest.partition(":")
        if sep and colon and number.isdigit():
            outcome.matches.append(LineMatch(_join(cwd, path), int(number), clip(text)))
        else:
            errors.append(row)
    _finish(outcome, errors, limit, result.timed_out, "rg")
    return outcome


def _finish(
    outcome: SearchOutcome, errors: list[str], limit: int, timed_out: bool, tool: str
) -> None:
    items = outcome.files if outcome.files else outcome.matches
    if len(items) > limit:
        del items[limit:]
        outcome.truncated = True
    if errors and not items:
        raise SearchError(f"{tool} failed: " + " ".join(e.strip() for e in errors[:6])[:600])
    if errors:
        outcome.notes.append(f"{tool} reported {len(errors)} problem(s), e.g. {errors[0][:150]}")
    if timed_out:
        outcome.truncated = True
        outcome.notes.append(f"the search timed out after {COMMAND_TIMEOUT:.0f}s")


# ---------------------------------------------------------------- grep/find (remote, no rg)


def grep_search(
    env: Environment,
    root: str,
    mode: str,
    pattern: str,
    glob: str | None,
    limit: int,
    cancel: threading.Event | None = None,
) -> SearchOutcome:
    cwd, target = _split_root(env, root)
    prune = " -o ".join(f"-name {shlex.quote(d)}" for d in IGNORED_DIRS)
    compiled = glob_regex(pattern) if mode == "files" else (glob_regex(glob) if glob else None)
    raw_limit = limit + 1
    if mode == "files":
        # find has no '**' and its -path '*' crosses '/': anchored globs list every
        # file and are matched below, with the same rules as rg and the Python walk.
        name_test = "" if compiled and compiled[1] else f"-name {shlex.quote(pattern)} "
        command = (
            f"find {shlex.quote(target)} \\( {prune} \\) -prune -o -type f "
            f"{name_test}-print 2>&1 | sort"
        )
        raw_limit = _FIND_RAW_LIMIT
    else:
        excludes = " ".join(f"--exclude-dir={shlex.quote(d)}" for d in IGNORED_DIRS)
        include = ""
        if glob and compiled and not compiled[1]:
            include = f" --include={shlex.quote(glob)}"
        elif compiled:  # --include sees only names: anchored globs are matched below
            raw_limit = _FIND_RAW_LIMIT
        command = (
            f"grep -rnIE --null {excludes}{include} -e {shlex.quote(pattern)} "
            f"-- {shlex.quote(target)} 2>&1"
        )
    result = env.execute(
        f"{command} | head -n {raw_limit}", cwd=cwd, timeout=COMMAND_TIMEOUT, cancel=cancel
    )
    outcome = SearchOutcome(engine="grep")
    outcome.notes.append("searched with grep/find (rg is not installed there): POSIX ERE syntax")
    errors: list[str] = []
    for row in result.output.split("\n"):
        if not row:
            continue
        if mode == "files":
            if row.startswith("find:"):
                errors.append(row)
            elif compiled is None or glob_matches(compiled, row.removeprefix("./")):
                outcome.files.append(_join(cwd, row))
            continue
        path, sep, rest = row.partition("\x00")
        number, colon, text = rest.partition(":")
        if not (sep and colon and number.isdigit()):
            errors.append(row)
        elif compiled is None or not compiled[1] or glob_matches(compiled, path.removeprefix("./")):
            outcome.matches.append(LineMatch(_join(cwd, path), int(number), clip(text)))
    if raw_limit > limit + 1 and result.output.count("\n") >= raw_limit:
        outcome.truncated = True
    _finish(outcome, errors, limit, result.timed_out, "grep" if mode == "content" else "find")
    return outcome
