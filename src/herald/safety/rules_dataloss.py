"""Rules for losing data without ``rm``: emptying or overwriting files that
live outside the project (``truncate``, ``: > file``, ``cp /dev/null``,
``dd of=``), moving files onto ``/dev/null``, ``xargs``/``find -exec``
copies and moves where many files land on one name, and git commands that
throw away uncommitted work or the history that could bring it back
(``checkout -- .``, ``restore .``, ``switch --discard-changes``, ``reflog
expire``, ``gc --prune=now`` …).

Inside the working tree and in scratch folders (``/tmp``) emptying a file is
ordinary work (logs, build outputs) and stays allowed.
"""

from __future__ import annotations

from herald.safety.effects import outside_project
from herald.safety.invocation import Context, Invocation, git_subcommand, parse_options
from herald.safety.long_options import expand_long
from herald.safety.paths import is_block_device
from herald.safety.shell_ast import SimpleCommand
from herald.safety.static_eval import command_name

OVERWRITE = "dangerous.overwrite"
GIT_DESTRUCTIVE = "dangerous.git_destructive"

_NULL_DEVICES = frozenset({"/dev/null", "/dev/zero", "/dev/full"})
_TRUNCATE_LONG = {o: o for o in ("--no-create", "--io-blocks", "--reference", "--size", "--help",
                                 "--version")}  # fmt: skip
_EMPTY_PRODUCERS = frozenset({":", "true", "false"})


def rule_truncate(inv: Invocation, ctx: Context) -> None:
    args = [expand_long(a, _TRUNCATE_LONG) if a.startswith("--") else a for a in inv.args]
    opts = parse_options(
        [type(w)(text=t, raw=w.raw) for w, t in zip(inv.arg_words, args, strict=True)],
        short_values="sr", long_values={"--size", "--reference"}, stop_at_positional=False,
    )  # fmt: skip
    size = opts.value("-s", "--size") or ""
    if size.startswith(("+", ">")):
        return  # only grows files
    targets = [w.text for w in opts.positional]
    lost = [t for t in targets if outside_project(t, ctx)]
    listed = inv.extra_args and (not targets or "{}" in targets)
    if lost or listed:
        shown = lost[0] if lost else "files another command lists"
        ctx.approval(
            OVERWRITE, f"cuts {shown} short, destroying its contents (truncate)", inv.segment
        )


def rule_dd(inv: Invocation, ctx: Context) -> None:
    for arg in inv.args:
        if arg.startswith("of="):
            target = arg[3:]
            if target in _NULL_DEVICES or is_block_device(target):
                return  # devices: `hardline.block_device_write` judges those
            if outside_project(target, ctx):
                ctx.approval(OVERWRITE, f"overwrites the file {target} (dd of=)", inv.segment)
            return


def _copy_shape(inv: Invocation) -> tuple[list[str], str | None, bool]:
    """(sources, destination or None, no-clobber) of a cp/mv invocation."""
    opts = parse_options(inv.arg_words, short_values="tS", long_values={"--target-directory", "--suffix"},
                         stop_at_positional=False)  # fmt: skip
    files = [w.text for w in opts.positional]
    keep = opts.has("-n", "--no-clobber", "-b", "--backup", "-i", "--interactive") or any(
        f.startswith(("--backup", "--update")) for f, _ in opts.flags
    )
    target = opts.value("-t", "--target-directory")
    if target is not None:
        return files, target, keep
    if len(files) >= 2:
        return files[:-1], files[-1], keep
    return files, None, keep


def _placeholder(cmd: SimpleCommand) -> str:
    """The word xargs -I / find -exec replaces with each listed file."""
    words = [w.text for w in cmd.words]
    for i, text in enumerate(words):
        if text in ("-I", "--replace") and i + 1 < len(words):
            return words[i + 1]
        if text.startswith("--replace="):
            return text.split("=", 1)[1]
        if text.startswith("-I") and len(text) > 2:
            return text[2:]
    return "{}"


def rule_copy_move(inv: Invocation, ctx: Context) -> None:
    sources, dest, keep = _copy_shape(inv)
    if inv.name == "mv" and dest in _NULL_DEVICES:
        ctx.approval(
            OVERWRITE, f"moves {' '.join(sources[:2])} onto {dest}, destroying it", inv.segment
        )
        return
    if inv.name == "cp" and "/dev/null" in sources and dest and outside_project(dest, ctx):
        ctx.approval(OVERWRITE, f"empties {dest} (cp /dev/null)", inv.segment)
        return
    if not inv.extra_args or keep:
        return
    # xargs / find -exec: the listed files are appended (or put where {} is).
    slot = _placeholder(inv.cmd)
    if dest is None or dest == slot:
        what = (
            "overwrites each listed file"
            if dest == slot
            else "makes the last listed file the target"
        )
        ctx.approval(
            OVERWRITE, f"{what}, so earlier ones are lost ({inv.name} via xargs)", inv.segment
        )
    elif inv.name == "mv":
        ctx.approval(
            OVERWRITE,
            f"moves many files onto {dest}; files with the same name overwrite each other",
            inv.segment,
        )


def _empties(cmd: SimpleCommand) -> bool:
    """The command writes nothing: `: > f`, `> f`, `true > f`, `cat /dev/null > f`, `echo -n > f`."""
    if not cmd.words:
        return True
    name = command_name(cmd.words[0].text)
    args = [w.text for w in cmd.words[1:]]
    if name in _EMPTY_PRODUCERS:
        return True
    if name == "cat" and args and all(a in _NULL_DEVICES for a in args):
        return True
    if name == "echo" and (args in ([], ["-n"], ["-n", ""])):
        return True  # a bare `echo` writes one newline: the contents are still gone
    return name == "printf" and args in ([""], ["%s", ""])


def check_emptying_redirects(cmd: SimpleCommand, ctx: Context) -> None:
    """`: > ~/notes.txt`: replaces a file outside the project with nothing."""
    for redirect in cmd.redirects:
        if (
            redirect.op not in (">", ">|")
            or redirect.fd not in ("", "1")
            or redirect.target is None
        ):
            continue
        target = redirect.target.text
        if target in _NULL_DEVICES or not outside_project(target, ctx):
            continue
        if _empties(cmd):
            ctx.approval(OVERWRITE, f"empties {target}, destroying its contents", cmd.source)
            return


# -- git --------------------------------------------------------------------------

_CHECKOUT_COMMON = (
    "--quiet",
    "--progress",
    "--no-progress",
    "--recurse-submodules",
    "--no-recurse-submodules",
    "--merge",
    "--conflict",
    "--ignore-other-worktrees",
    "--track",
    "--no-track",
    "--orphan",
    "--detach",
    "--guess",
    "--no-guess",
)
_CHECKOUT_TABLES = {
    "checkout": {o: o for o in (*_CHECKOUT_COMMON, "--force", "--ours", "--theirs", "--patch",
                                "--ignore-skip-worktree-bits", "--overwrite-ignore",
                                "--no-overwrite-ignore", "--overlay", "--no-overlay",
                                "--pathspec-from-file", "--pathspec-file-nul")},
    "switch": {o: o for o in (*_CHECKOUT_COMMON, "--force", "--discard-changes", "--create",
                              "--force-create")},
    "restore": {o: o for o in ("--source", "--staged", "--worktree", "--patch", "--quiet",
                               "--progress", "--no-progress", "--ours", "--theirs", "--merge",
                               "--conflict", "--ignore-unmerged", "--ignore-skip-worktree-bits",
                               "--recurse-submodules", "--no-recurse-submodules", "--overlay",
                               "--no-overlay", "--pathspec-from-file", "--pathspec-file-nul")},
}  # fmt: skip
_GC_LONG = {o: o for o in ("--aggressive", "--auto", "--prune", "--no-prune", "--quiet", "--force",
                           "--keep-largest-pack", "--cruft", "--no-cruft", "--max-cruft-size",
                           "--detach", "--no-detach")}  # fmt: skip
_REFLOG_LONG = {o: o for o in ("--expire", "--expire-unreachable", "--all", "--rewrite",
                               "--updateref", "--stale-fix", "--dry-run", "--verbose",
                               "--single-worktree")}  # fmt: skip
_BROAD_PATHSPECS = frozenset({".", "./", ":/", ":", "*", "/", "-A", ":(top)", ":(glob)**"})


def _broad_pathspec(paths: list[str]) -> bool:
    """A pathspec covering the tree or many files: '.', ':/', a glob, a directory."""
    return any(
        p in _BROAD_PATHSPECS or p.endswith("/") or any(c in p for c in "*?[") or p.startswith(":(")
        for p in paths
    )


def _expanded(rest: list[str], table: dict[str, str]) -> list[str]:
    out: list[str] = []
    for arg in rest:
        if arg == "--":
            out.append(arg)
            out.extend(rest[len(out) :])
            break
        out.append(expand_long(arg, table) if arg.startswith("--") else arg)
    return out


def rule_git_discard(inv: Invocation, ctx: Context) -> None:
    found = git_subcommand(inv.args)
    if found is None:
        return
    sub, rest = found
    what = ""
    if sub in ("checkout", "switch", "restore"):
        rest = _expanded(rest, _CHECKOUT_TABLES[sub])
        flags = [a for a in rest if a.startswith("-") and a != "--"]
        short_f = any(a.startswith("-") and not a.startswith("--") and "f" in a[1:] for a in flags)
        if sub != "restore" and (short_f or "--force" in flags or "--discard-changes" in flags):
            what = f"throws away uncommitted changes (git {sub} --force)"
        elif sub in ("checkout", "restore"):
            if "--" in rest:
                paths = rest[rest.index("--") + 1 :]
            else:
                operands = [a for a in rest if not a.startswith("-")]
                paths = operands if sub == "restore" or len(operands) == 1 else operands[1:]
            short = "".join(a[1:] for a in flags if not a.startswith("--"))
            staged_only = (
                sub == "restore"
                and ("--staged" in flags or "S" in short)
                and "--worktree" not in flags
                and "W" not in short
            )
            if not staged_only and _broad_pathspec(paths):
                what = f"overwrites uncommitted changes in {' '.join(paths[:2])} (git {sub})"
    elif sub == "reflog" and rest[:1] in (["expire"], ["delete"], ["drop"]):
        expanded = _expanded(rest, _REFLOG_LONG)
        if (
            rest[0] != "expire"
            or any(
                a.startswith(("--expire=", "--expire-unreachable="))
                and a.split("=", 1)[1] in ("now", "all", "0")
                for a in expanded
            )
            or "--all" in expanded
        ):
            what = f"erases the reflog that can recover lost commits (git reflog {rest[0]})"
    elif sub == "gc":
        for arg in _expanded(rest, _GC_LONG):
            if arg.startswith("--prune=") and arg.split("=", 1)[1] in ("now", "all", "0"):
                what = "deletes unreachable commits immediately (git gc --prune=now)"
    elif sub == "filter-repo" and not {"--analyze", "--dry-run", "-h", "--help"} & set(rest):
        what = "rewrites repository history (git filter-repo)"
    elif sub == "prune" and "-n" not in rest and "--dry-run" not in rest:
        what = "deletes unreachable commits (git prune)"
    elif sub == "update-ref" and ("-d" in rest or "--stdin" in rest):
        what = "deletes or rewrites a ref directly (git update-ref)"
    elif sub == "worktree" and rest[:1] == ["remove"] and ("-f" in rest or "--force" in rest):
        what = "removes a worktree with its uncommitted changes (git worktree remove --force)"
    if what:
        ctx.approval(GIT_DESTRUCTIVE, what, inv.segment)
