"""The ``control.*`` rules: Herald's control plane (see :mod:`.control_plane`) as
the command checker sees it.

They run on every `Invocation` (wrappers and carriers already peeled off by
:mod:`.carriers`, so ``sudo``, ``env``, ``bash -c``, ``xargs``, ``eval`` … reach
here as the real command) and on every redirect:

* Herald's admin commands in any spelling: ``herald``, a path to its entry
  script, ``python -m herald``, ``uvx``/``pipx run``/``uv run``/``poetry run``
  launchers, ``$(command -v herald)`` or `` `which herald` `` as the command name,
  and an unknown program used exactly like Herald (an alias or a copy);
* writes, deletes, moves, links and mode changes of control files, Herald's
  code, and ``memories/``/``skills/`` (which have their own scanning tools);
* reads of Herald's secrets, directly or by recursive readers of its home;
* ``pip install``/``uninstall`` of Herald and inline code that names Herald;
* Herald run later or elsewhere (tmux, screen, parallel, a crontab fed from the
  command) and containers with Herald's home, or a directory holding it, mounted.

Any command not known to only read its operands is taken to change a control path it
is given (an unknown tool must not be a side door).
"""

from __future__ import annotations

import dataclasses
import re

import herald.safety.control_plane as cp
from herald.safety.carriers import stdin_of
from herald.safety.invocation import Context, Invocation
from herald.safety.paths import canonical
from herald.safety.rules_workflow import is_file_write, write_targets
from herald.safety.shell_ast import SimpleCommand, Word

_HERALD_NAME_RE = re.compile(r"herald(?:[@=<>~!].*)?")
_PYTHON_RE = re.compile(r"(?:python|pypy)[\d.]*(?:\.exe)?")
_PIP_RE = re.compile(r"pip[\d.]*")
_INTERPRETER_RE = re.compile(
    r"(?:python|pypy|perl|ruby|node|nodejs|bun|deno|php|lua|luajit|rscript|julia|osascript"
    r"|groovy|pwsh|powershell)[\d.]*(?:\.exe)?"
)
_CODE_FLAGS = frozenset({"-c", "-e", "-E", "-r", "-p", "--eval", "--print", "-command", "-Command"})

# Launchers that run a named program: (name, sub-command words before it).
_LAUNCHERS: dict[str, tuple[tuple[str, ...], ...]] = {
    "uvx": ((),),
    "pipx": (("run",),),
    "uv": (("run",), ("tool", "run"), ("x",)),
    "poetry": (("run",),),
    "pdm": (("run",),),
    "hatch": (("run",),),
    "pipenv": (("run",),),
    "rye": (("run",),),
    "pixi": (("run",), ("exec",)),
    "conda": (("run",),),
    "mamba": (("run",),),
    "micromamba": (("run",),),
}
_LAUNCHER_VALUES = frozenset({"--from", "--with", "--python", "-p", "--spec", "--with-editable",
                              "--with-requirements", "--index-url", "--extra-index-url", "-n",
                              "--name", "--prefix", "--project", "--directory", "-e", "--env",
                              "--group", "--extra", "--package", "--pip-args", "-i"})  # fmt: skip

_DEFERRED_RUNNERS = frozenset({"tmux", "screen", "parallel", "dtach", "abduco", "byobu",
                               "zellij", "expect", "sem"})  # fmt: skip
_CONTAINER_RUNNERS = frozenset({"docker", "podman", "nerdctl", "finch"})
# Well-known programs with `config set`/`config edit`/`cron add` of their own.
_OTHER_CLIS = frozenset({"git", "npm", "pnpm", "yarn", "poetry", "pip", "pip3", "conda",
                         "gh", "glab", "docker", "kubectl", "gcloud", "az", "aws", "helm",
                         "cargo", "go", "uv", "pdm", "hatch", "composer"})  # fmt: skip
# Commands that only name a path (never print its contents).
_NAMES_ONLY = frozenset({"ls", "stat", "test", "[", "[[", "file", "realpath", "readlink",
                         "dirname", "basename", "echo", "printf", "du", "wc", "which", "type",
                         "cd", "pushd", "exa", "eza", "tree", "lsattr", "true", "false"})  # fmt: skip
# Commands that change the files their operands name (besides `write_targets`).
_MUTATORS = frozenset({"touch", "mkdir", "rmdir", "chmod", "chown", "chgrp", "chattr",
                       "setfacl", "ln", "link", "patch", "vi", "vim", "nvim", "nano", "emacs",
                       "ed", "ex", "micro", "joe", "mcedit", "sqlite3", "sqlite", "litecli",
                       "duckdb", "git", "mkfifo",
                       "install", "mktemp", "dd", "setfattr", "restorecon", "utime"})  # fmt: skip
# Commands known to only read their operands (or whose writes `write_targets` already
# names). Any other command given a control path is taken to change it: an unknown tool
# (`wget -P DIR`, `yq -i`, `openssl -out`, `npm --prefix`) must not be a side door.
_READERS = _NAMES_ONLY | frozenset({
    "cat", "less", "more", "head", "tail", "grep", "egrep", "fgrep", "zgrep", "rg",
    "ag", "ack", "jq", "diff", "cmp", "md5sum", "sha1sum", "sha256sum", "sha512sum",
    "b2sum", "cksum", "strings", "od", "xxd", "hexdump", "bat", "batcat", "view", "nl",
    "sort", "uniq", "cut", "tac", "column", "awk", "gawk", "mawk", "base64", "source",
    ".", "yamllint", "find", "cp", "scp", "rsync", "tar", "bsdtar", "zip", "7z", "7za",
    "mv", "rm", "unlink", "srm", "shred", "tee", "sponge", "truncate", "sed", "perl",
    "ruby", "gzip", "zcat", "xargs", "env", "sudo", "kill", "pgrep", "pkill", "lsof",
    "fuser", "inotifywait", "watch", "stat", "unzip", "sqlite3", "sqlite", "litecli",
    "duckdb", "python", "python3", "node", "bash", "sh", "zsh", "dash",
})  # fmt: skip
_SQLITES = frozenset({"sqlite3", "sqlite", "litecli", "duckdb"})
_READ_SQL_RE = re.compile(r"\s*(?:select\b|pragma\s+\w+\s*;?\s*$|explain\b|\.(?:tables|schema|headers|mode|indexes|dump)\b)", re.I)  # fmt: skip
_ALWAYS_RECURSIVE = frozenset({"rg", "ag", "ack", "tar", "bsdtar", "zip", "7z", "7za", "rsync"})
_MAYBE_RECURSIVE = frozenset({"grep", "egrep", "fgrep", "cp", "scp", "find", "zgrep"})
_GIT_READS = frozenset({"log", "show", "diff", "status", "blame", "grep", "ls-files",
                        "cat-file", "rev-parse", "describe", "shortlog"})  # fmt: skip
_FIND_ACTIONS = frozenset({"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fls",
                           "-fprintf", "-fprint0"})  # fmt: skip


# -- findings --------------------------------------------------------------------


def _admin_finding(verdict: cp.AdminVerdict, segment: str, ctx: Context) -> None:
    if verdict.kind == "hardline":
        ctx.hardline(verdict.rule, verdict.description, segment)
    elif verdict.kind in ("admin", "nested"):
        ctx.approval(
            verdict.rule,
            f"{verdict.description}; Herald's admin commands are the owner's: only a person "
            "present may allow it, once",
            segment,
        )


def _path_finding(found: cp.ControlPath, verb: str, segment: str, ctx: Context) -> None:
    if found.area == "memory":
        ctx.hardline(
            cp.MEMORY,
            f"{verb} {found.what} ({found.path}) directly; use the memory tool for memories "
            "and skill_manage for skills, which scan what they write",
            segment,
        )
    elif found.area == "code":
        ctx.hardline(
            cp.CODE,
            f"{verb} Herald's installed code ({found.path}); only the owner may change it",
            segment,
        )
    else:
        ctx.hardline(
            cp.FILE_WRITE,
            f"{verb} {found.what} ({found.path}), part of Herald's control plane; only the "
            "owner may change it: they can edit it themselves (`herald config edit`, "
            "`herald config set KEY VALUE`)",
            segment,
        )


def judge_control_write(path: str, segment: str, ctx: Context, *, deleting: bool = False) -> None:
    found = cp.classify_path(ctx.resolve(path.strip()), ctx.env)
    if found is not None:
        _path_finding(found, "deletes" if deleting else "writes to", segment, ctx)


def _secret_read(found: cp.ControlPath, segment: str, ctx: Context) -> None:
    ctx.hardline(
        cp.SECRET_READ,
        f"reads {found.what} ({found.path}); no tool may read Herald's secrets, ask the "
        "owner if a value is needed",
        segment,
    )


# -- herald in any spelling ----------------------------------------------------------


def _is_herald_word(word: Word) -> bool:
    return _HERALD_NAME_RE.fullmatch(word.text.rsplit("/", 1)[-1].lower()) is not None


def _names_herald(word: Word) -> bool:
    """`$(command -v herald)`, `` `which herald` ``, `$(readlink -f $(which herald))`."""
    for sub in word.subs:
        for cmd in sub.walk():
            if any(_is_herald_word(w) for w in cmd.words[1:]) or any(
                _names_herald(w) for w in cmd.words
            ):
                return True
    return False


def _skip_options(words: list[Word], values: frozenset[str]) -> list[Word]:
    i = 0
    while i < len(words) and words[i].text.startswith("-"):
        i += 2 if words[i].text in values else 1
    return words[i:]


def _launched(inv: Invocation) -> list[Word] | None:
    """The command a launcher (`uvx`, `pipx run`, `uv run` …) runs, else None."""
    forms = _LAUNCHERS.get(inv.name)
    if forms is None:
        return None
    rest = _skip_options(inv.arg_words, _LAUNCHER_VALUES)
    for form in forms:
        if [w.text for w in rest[: len(form)]] == list(form):
            return _skip_options(rest[len(form) :], _LAUNCHER_VALUES) or None
    return None


def _python_module(inv: Invocation) -> tuple[str, list[str]] | None:
    """(module, its arguments) for `python -m MODULE …`."""
    words = inv.args
    i = 0
    while i < len(words):
        a = words[i]
        if a == "-m" and i + 1 < len(words):
            return words[i + 1], words[i + 2 :]
        if a.startswith("-m") and len(a) > 2 and not a.startswith("--"):
            return a[2:], words[i + 1 :]
        if not a.startswith("-") or a in ("-c", "--"):
            return None
        i += 2 if a in ("-W", "-X", "-Q") else 1
    return None


def _herald_args(inv: Invocation) -> list[str] | None:
    if _is_herald_word(inv.words[0]):
        return inv.args
    if inv.words[0].dynamic and _names_herald(inv.words[0]):
        return inv.args
    if _PYTHON_RE.fullmatch(inv.name):
        found = _python_module(inv)
        if found and (found[0] == "herald" or found[0].startswith("herald.")):
            return found[1]
        return None
    if (
        inv.name not in _LAUNCHERS
        and inv.name not in _OTHER_CLIS
        and cp.looks_like_herald(inv.args)
    ):
        return inv.args  # an alias, symlink or copy of Herald's entry script
    return None


def rule_herald_admin(inv: Invocation, ctx: Context) -> None:
    launched = _launched(inv)
    if launched is not None:
        ctx.invocation(dataclasses.replace(inv, words=launched))
        return
    args = _herald_args(inv)
    if args is not None:
        _admin_finding(cp.classify_admin(args), inv.segment, ctx)
        if "-o" in args or "--output" in args or any(a.startswith("--output=") for a in args):
            out = [a.split("=", 1)[1] for a in args if a.startswith("--output=")]
            out += [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-o", "--output")]
            for path in out:
                judge_control_write(path, inv.segment, ctx)
        return
    if (
        _PIP_RE.fullmatch(inv.name)
        or (_PYTHON_RE.fullmatch(inv.name) and (_python_module(inv) or ("", []))[0] == "pip")
        or (inv.name == "uv" and inv.args[:1] == ["pip"])
    ):
        _pip(inv, ctx)
    if _INTERPRETER_RE.fullmatch(inv.name):
        _inline_code(inv, ctx)


def _pip(inv: Invocation, ctx: Context) -> None:
    args = inv.args
    if not ({"install", "uninstall", "remove"} & set(args)):
        return
    if any(_HERALD_NAME_RE.fullmatch(a.lower()) or a.lower().startswith("herald[") for a in args):
        ctx.hardline(
            cp.CODE, "installs, replaces or removes Herald's own package; only the owner may",
            inv.segment,
        )  # fmt: skip


def _inline_code(inv: Invocation, ctx: Context) -> None:
    """Inline interpreter code that names Herald (its package, command, home): it could
    do anything the admin commands do, so it is refused whatever it says."""
    words = inv.args
    codes = [words[i + 1] for i, a in enumerate(words[:-1]) if a in _CODE_FLAGS]
    codes += [a[2:] for a in words if len(a) > 2 and a[:2] in ("-c", "-e") and " " in a]
    source = stdin_of(inv.cmd)
    if source.kind == "literal":
        codes.append(source.text)
    if any(cp.HERALD_MENTION_RE.search(code) for code in codes):
        ctx.hardline(
            cp.CODE,
            f"runs inline {inv.name} code that drives Herald or its home; only the owner "
            "may run Herald's admin commands",
            inv.segment,
        )


# -- paths ---------------------------------------------------------------------------


def _operand_paths(inv: Invocation) -> list[str]:
    out: list[str] = []
    for text in inv.args:
        if text.startswith("-"):
            if "=" in text:
                out.append(text.split("=", 1)[1])
            continue
        if text.startswith(("if=", "of=")):
            out.append(text[3:])
        elif text.startswith("@"):
            out.append(text[1:])
        else:
            out.append(text)
    return out


def _sqlite_read_only(inv: Invocation) -> bool:
    args = inv.args
    if "-readonly" in args or "--readonly" in args:
        return True
    operands = [a for a in args if not a.startswith("-")]
    sql = operands[1:]
    source = stdin_of(inv.cmd)
    if source.kind == "literal":
        sql.append(source.text)
    elif source.kind != "none" or not sql:
        return False  # fed from a pipe or a file, or interactive: unknown statements
    statements = [s for text in sql for s in text.split(";") if s.strip()]
    return bool(statements) and all(_READ_SQL_RE.match(s) for s in statements)


def _recursive(inv: Invocation) -> bool:
    name, args = inv.name, inv.args
    if name in _ALWAYS_RECURSIVE:
        return True
    if name == "find":
        return bool(_FIND_ACTIONS & set(args))
    shorts = "".join(a[1:] for a in args if a.startswith("-") and not a.startswith("--"))
    if name in ("cp", "scp"):
        return bool(set(shorts) & set("rRa")) or "--recursive" in args or "--archive" in args
    return bool(set(shorts) & set("rR")) or "--recursive" in args or "-d" in args


_EXTRACT_DIR_FLAGS = {"tar": ("-C", "--directory"), "bsdtar": ("-C", "--directory"),
                      "unzip": ("-d",)}  # fmt: skip
_EXTRACTORS = frozenset({*_EXTRACT_DIR_FLAGS, "7z", "7za"})


def _extract_dirs(inv: Invocation) -> list[str]:
    """Where an archive tool unpacks (tar -C DIR, unzip -d DIR, 7z x -oDIR)."""
    if inv.name not in _EXTRACTORS:
        return []
    args = inv.args
    flag = _EXTRACT_DIR_FLAGS.get(inv.name, ())
    out = [args[i + 1] for i, a in enumerate(args[:-1]) if a in flag]
    out += [a.split("=", 1)[1] for a in args if a.startswith("--directory=")]
    if inv.name in ("7z", "7za"):
        out += [a[2:] for a in args if a.startswith("-o") and len(a) > 2]
    return out


def rule_control_paths(inv: Invocation, ctx: Context) -> None:
    writes, deletes = write_targets(inv)
    writes = [*writes, *_extract_dirs(inv)]
    for path in writes:
        judge_control_write(path, inv.segment, ctx)
    for path in deletes:
        judge_control_write(path, inv.segment, ctx, deleting=True)
    name = inv.name
    operands = _operand_paths(inv)
    mutating = name in _MUTATORS and not (name in _SQLITES and _sqlite_read_only(inv))
    if name == "git":  # a repository in the home, or a clone / checkout into it
        mutating = bool(inv.args) and not set(inv.args) & _GIT_READS
    reader = name in _READERS or _INTERPRETER_RE.fullmatch(name) is not None or name == "git"
    for path in operands:
        found = cp.classify_path(ctx.resolve(path), ctx.env)
        if found is None:
            continue
        if found.area == "secret" and not mutating and name not in _NAMES_ONLY:
            _secret_read(found, inv.segment, ctx)
        elif mutating or not reader:
            _path_finding(found, "changes", inv.segment, ctx)
    if (name in _ALWAYS_RECURSIVE or name in _MAYBE_RECURSIVE) and _recursive(inv):
        for path in operands:
            resolved = ctx.resolve(path)
            if cp.holds_secrets(resolved, ctx.env):
                found = cp.ControlPath("secret", "Herald's home, secrets included", resolved)
                _secret_read(found, inv.segment, ctx)
    if name == "find" and _FIND_ACTIONS & set(inv.args):
        # -delete or -exec under a start path: every file below may change
        for word in inv.arg_words:
            if word.text.startswith(("-", "(", "!")):
                break
            found = cp.classify_path(ctx.resolve(word.text), ctx.env)
            if found is not None:
                _path_finding(found, "changes or deletes files in", inv.segment, ctx)


def check_control_redirects(cmd: SimpleCommand, ctx: Context) -> None:
    for redirect in cmd.redirects:
        target = redirect.target
        if target is None:
            continue
        if is_file_write(redirect):
            judge_control_write(target.text, cmd.source, ctx)
        elif redirect.op in ("<", "<>") and not target.procsub:
            found = cp.classify_path(ctx.resolve(target.text), ctx.env)
            if found is not None and found.area == "secret":
                _secret_read(found, cmd.source, ctx)


def _mount_sources(args: list[str]) -> list[str]:
    out: list[str] = []
    for i, a in enumerate(args):
        value = None
        if a in ("-v", "--volume", "--mount") and i + 1 < len(args):
            value = args[i + 1]
        elif a.startswith(("--volume=", "--mount=")):
            value = a.split("=", 1)[1]
        elif a.startswith("-v") and len(a) > 2:
            value = a[2:]
        if value is None:
            continue
        if "source=" in value or "src=" in value:
            for part in value.split(","):
                key, _, v = part.partition("=")
                if key in ("source", "src"):
                    out.append(v)
        else:
            out.append(value.split(":", 1)[0])
    return out


def rule_deferred(inv: Invocation, ctx: Context) -> None:
    """Programs that run a command later or elsewhere, where the checker cannot follow:
    a terminal multiplexer, GNU parallel, a crontab fed from this command, a container
    with Herald's home (or a directory holding it) mounted."""
    name = inv.name
    if name in _DEFERRED_RUNNERS and any(cp.HERALD_MENTION_RE.search(a) for a in inv.args):
        ctx.hardline(
            cp.CODE, f"runs Herald through {name}, out of the checker's sight", inv.segment
        )
    elif name == "crontab" and any(cp.HERALD_MENTION_RE.search(s) for s in ctx.segments):
        ctx.hardline(cp.CODE, "schedules Herald's commands in a crontab", inv.segment)
    elif name in _CONTAINER_RUNNERS:
        for source in _mount_sources(inv.args):
            resolved = canonical(ctx.resolve(source), ctx.env)
            if not resolved.startswith("/"):
                continue
            inside = cp.classify_path(resolved, ctx.env) is not None
            above = any(h == resolved or h.startswith(resolved.rstrip("/") + "/")
                        for h in cp.control_homes(ctx.env))  # fmt: skip
            if inside or above:
                ctx.hardline(
                    cp.FILE_WRITE,
                    f"mounts {source} into a container, Herald's control files with it",
                    inv.segment,
                )
                return


def rule_control(inv: Invocation, ctx: Context) -> None:
    """Every control-plane rule for one invocation (see the module docstring)."""
    rule_herald_admin(inv, ctx)
    rule_control_paths(inv, ctx)
    rule_deferred(inv, ctx)


__all__ = ["check_control_redirects", "judge_control_write", "rule_control"]
