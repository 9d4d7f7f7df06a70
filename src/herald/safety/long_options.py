"""GNU long options abbreviated to a prefix: ``git push --forc`` is
``--force``, ``rm --recur`` is ``--recursive``.

getopt_long and git's parse-options accept any unambiguous prefix of a long
option, so a rule that looks for ``--force`` must also see ``--forc``. Each
table below lists the real long options of a command the rules inspect,
mapped to the meaning the rules care about (aliases share one meaning, so
``--forc`` matching ``--force`` and ``--force-with-lease`` is still "force").
A prefix that could mean two different things is left as written: the real
tool refuses it too.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType


def _same(*names: str) -> dict[str, str]:
    return {n: n for n in names}


def _table(*parts: Mapping[str, str]) -> MappingProxyType[str, str]:
    merged: dict[str, str] = {}
    for part in parts:
        merged.update(part)
    return MappingProxyType(merged)


RM = _table(_same("--force", "--interactive", "--one-file-system", "--no-preserve-root",
                  "--preserve-root", "--recursive", "--dir", "--verbose", "--help", "--version"))  # fmt: skip
PERMISSIONS = _table(_same("--changes", "--silent", "--quiet", "--verbose", "--no-preserve-root",
                           "--preserve-root", "--reference", "--recursive", "--help", "--version",
                           "--dereference", "--no-dereference", "--from"))  # fmt: skip
RSYNC = _table(
    _same("--archive", "--recursive", "--verbose", "--compress", "--exclude", "--include", "--rsh",
          "--progress", "--partial", "--checksum", "--update", "--dirs", "--links", "--perms",
          "--times", "--human-readable", "--stats", "--itemize-changes", "--filter", "--files-from",
          "--backup", "--backup-dir", "--suffix", "--bwlimit", "--existing", "--ignore-existing",
          "--size-only", "--timeout", "--port", "--rsync-path", "--info", "--chmod", "--owner",
          "--group", "--devices", "--specials", "--hard-links", "--acls", "--xattrs",
          "--numeric-ids", "--inplace", "--append", "--sparse", "--whole-file", "--one-file-system",
          "--max-delete", "--max-size", "--min-size", "--force", "--ignore-errors", "--list-only",
          "--out-format", "--log-file", "--password-file", "--quiet", "--version", "--help",
          "--dry-run", "--remove-source-files", "--exclude-from", "--include-from"),
    dict.fromkeys(("--del", "--delete", "--delete-before", "--delete-during", "--delete-delay",
                   "--delete-after", "--delete-excluded", "--delete-missing-args"), "--delete"),
)  # fmt: skip
SUDO = _table(
    _same("--askpass", "--background", "--bell", "--chdir", "--chroot", "--close-from",
          "--command-timeout", "--edit", "--group", "--help", "--host", "--list", "--login",
          "--non-interactive", "--other-user", "--preserve-env", "--preserve-groups", "--prompt",
          "--remove-timestamp", "--reset-timestamp", "--role", "--set-home", "--shell", "--stdin",
          "--type", "--user", "--validate", "--version"),
)  # fmt: skip
ENV = _table(_same("--ignore-environment", "--null", "--unset", "--chdir", "--split-string",
                   "--block-signal", "--default-signal", "--ignore-signal",
                   "--list-signal-handling", "--debug", "--help", "--version"))  # fmt: skip
WIPEFS = _table(_same("--all", "--backup", "--force", "--json", "--lock", "--no-act",
                      "--noheadings", "--offset", "--output", "--parsable", "--quiet", "--types",
                      "--help", "--version"))  # fmt: skip
MAN = _table(_same("--pager", "--html", "--config-file", "--manpath", "--sections", "--extension",
                   "--locale", "--systems", "--preprocessor", "--prompt", "--ascii", "--encoding",
                   "--no-hyphenation", "--no-justification", "--troff", "--troff-device",
                   "--ditroff", "--gxditview", "--warnings", "--all", "--update", "--no-subpages",
                   "--catman", "--location", "--where", "--where-cat", "--local-file", "--whatis",
                   "--apropos", "--global-apropos", "--regex", "--wildcard", "--names-only",
                   "--debug", "--default", "--help", "--usage", "--version"))  # fmt: skip
SORT = _table(_same("--compress-program", "--buffer-size", "--batch-size", "--check",
                    "--debug", "--dictionary-order", "--field-separator", "--files0-from",
                    "--general-numeric-sort", "--human-numeric-sort", "--ignore-case",
                    "--ignore-leading-blanks", "--ignore-nonprinting", "--key", "--merge",
                    "--month-sort", "--numeric-sort", "--output", "--parallel", "--random-sort",
                    "--random-source", "--reverse", "--sort", "--stable", "--temporary-directory",
                    "--unique", "--version-sort", "--zero-terminated", "--help", "--version"))  # fmt: skip
TAR = _table(_same("--to-command", "--use-compress-program", "--checkpoint-action", "--checkpoint",
                   "--rsh-command", "--info-script", "--new-volume-script", "--create",
                   "--extract", "--list", "--file", "--directory", "--verbose", "--gzip",
                   "--bzip2", "--xz", "--zstd", "--exclude", "--append", "--update", "--get",
                   "--help", "--version"))  # fmt: skip
GIT_PUSH = _table(
    _same("--all", "--atomic", "--dry-run", "--exec", "--follow-tags", "--ipv4", "--ipv6",
          "--no-verify", "--porcelain", "--progress", "--push-option", "--quiet",
          "--receive-pack", "--recurse-submodules", "--repo", "--set-upstream", "--signed",
          "--tags", "--thin", "--verbose", "--verify", "--no-thin", "--no-signed",
          "--no-force-with-lease", "--no-atomic", "--no-recurse-submodules", "--branches"),
    dict.fromkeys(("--force", "--force-with-lease", "--force-if-includes"), "--force"),
    dict.fromkeys(("--delete", "--prune"), "--delete"),
    {"--mirror": "--mirror"},
)  # fmt: skip
GIT_RESET = _table(_same("--hard", "--soft", "--mixed", "--merge", "--keep", "--quiet",
                         "--no-quiet", "--patch", "--intent-to-add", "--recurse-submodules",
                         "--no-recurse-submodules", "--pathspec-from-file",
                         "--pathspec-file-nul", "--no-refresh", "--refresh"))  # fmt: skip
GIT_CLEAN = _table(_same("--force", "--dry-run", "--quiet", "--interactive", "--exclude"))
GIT_BRANCH = _table(_same("--delete", "--force", "--move", "--copy", "--list", "--all",
                          "--remotes", "--verbose", "--quiet", "--track", "--no-track",
                          "--set-upstream-to", "--unset-upstream", "--contains", "--no-contains",
                          "--merged", "--no-merged", "--sort", "--points-at", "--format",
                          "--color", "--no-color", "--column", "--no-column", "--edit-description",
                          "--show-current", "--create-reflog", "--ignore-case", "--abbrev",
                          "--no-abbrev", "--omit-empty", "--recurse-submodules"))  # fmt: skip
IPTABLES = _table(_same("--flush", "--delete-chain", "--zero", "--policy", "--list",
                        "--list-rules", "--append", "--check", "--delete", "--insert",
                        "--replace", "--new-chain", "--rename-chain", "--table", "--numeric",
                        "--verbose", "--line-numbers", "--exact", "--wait", "--help",
                        "--version", "--jump", "--protocol", "--source", "--destination",
                        "--in-interface", "--out-interface", "--dport", "--sport"))  # fmt: skip

BY_COMMAND: Mapping[str, Mapping[str, str]] = MappingProxyType({
    "rm": RM, "chmod": PERMISSIONS, "chown": PERMISSIONS, "chgrp": PERMISSIONS,
    "rsync": RSYNC, "sudo": SUDO, "env": ENV, "wipefs": WIPEFS, "man": MAN, "sort": SORT,
    "tar": TAR, "iptables": IPTABLES, "ip6tables": IPTABLES, "iptables-nft": IPTABLES,
    "iptables-legacy": IPTABLES, "ip6tables-nft": IPTABLES,
})  # fmt: skip
GIT_SUBCOMMANDS: Mapping[str, Mapping[str, str]] = MappingProxyType(
    {"push": GIT_PUSH, "reset": GIT_RESET, "clean": GIT_CLEAN, "branch": GIT_BRANCH}
)


def expand_long(option: str, table: Mapping[str, str] | None) -> str:
    """``--forc`` -> ``--force`` (keeping any ``=value``) when the prefix
    names one meaning in table; anything else comes back unchanged."""
    if table is None or not option.startswith("--") or len(option) < 3:
        return option
    key, eq, value = option.partition("=")
    if key in table:
        return table[key] + eq + value
    meanings = {meaning for name, meaning in table.items() if name.startswith(key)}
    if len(meanings) != 1:
        return option
    return meanings.pop() + eq + value


def expand_all(args: Iterable[str], table: Mapping[str, str] | None) -> list[str]:
    """Every argument with long-option prefixes expanded (stops at ``--``)."""
    out: list[str] = []
    done = False
    for arg in args:
        if arg == "--":
            done = True
        out.append(arg if done else expand_long(arg, table))
    return out
