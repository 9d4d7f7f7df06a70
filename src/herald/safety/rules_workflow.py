"""Rules for everyday tools used destructively: git history and working-tree
loss, SQL that drops or empties tables, services and Herald's own gateway
being stopped, container and cloud clean-ups, scheduled-job replacement,
writes to sensitive files and uploads of secrets.
"""

from __future__ import annotations

import re

from herald.safety.carriers import stdin_of
from herald.safety.host_executed import judge_host_executed
from herald.safety.invocation import Context, Invocation, git_subcommand, parse_options
from herald.safety.paths import is_block_device, secret_source, sensitive_target
from herald.safety.shell_ast import Redirect, SimpleCommand, Word
from herald.safety.static_eval import command_name

# -- git ------------------------------------------------------------------------


def _short_has(args: list[str], letter: str) -> bool:
    return any(a.startswith("-") and not a.startswith("--") and letter in a[1:] for a in args)


def rule_git(inv: Invocation, ctx: Context) -> None:
    found = git_subcommand(inv.args)
    if found is None:
        return
    sub, rest = found
    options = [a for a in rest if a.startswith("-")]
    what = ""
    if sub == "reset" and "--hard" in rest:
        what = "discards uncommitted changes (git reset --hard)"
    elif sub == "push" and not ({"-n", "--dry-run"} & set(rest)):
        forced = _short_has(options, "f") or any(
            a in ("--force", "--mirror", "--force-if-includes")
            or a.startswith("--force-with-lease")
            for a in options
        )
        deleting = _short_has(options, "d") or "--delete" in options or "--prune" in options
        refs = [a for a in rest if not a.startswith("-")]
        if forced or any(r.startswith("+") for r in refs[1:]):
            what = "overwrites remote history (git push --force)"
        elif deleting or any(r.startswith(":") for r in refs[1:]):
            what = "deletes remote branches (git push --delete)"
    elif sub == "clean" and (_short_has(options, "f") or "--force" in options):
        if not (_short_has(options, "n") or "--dry-run" in options):
            what = "deletes untracked files (git clean -f)"
    elif sub == "branch":
        delete = _short_has(options, "d") or "--delete" in options
        force = _short_has(options, "f") or "--force" in options
        if _short_has(options, "D") or (delete and force):
            what = "force-deletes a branch (git branch -D)"
    elif sub == "filter-branch":
        what = "rewrites repository history (git filter-branch)"
    elif sub == "stash" and rest[:1] in (["clear"], ["drop"]):
        what = f"throws away stashed changes (git stash {rest[0]})"
    if what:
        ctx.approval("dangerous.git_destructive", what, inv.segment)


# -- SQL ------------------------------------------------------------------------

SQL_CLIENTS = frozenset({"psql", "mysql", "mariadb", "sqlite3", "sqlite", "duckdb", "sqlcmd",
                         "clickhouse-client", "clickhouse", "cockroach", "cqlsh", "snowsql",
                         "trino", "presto", "spark-sql", "bq", "mongo", "mongosh", "redis-cli",
                         "usql", "pgcli", "mycli", "litecli", "isql", "db2", "sqlplus"})  # fmt: skip
_SQL_DROP_RE = re.compile(
    r"\bDROP\s+(?:TABLE|DATABASE|SCHEMA|VIEW|INDEX|USER|ROLE|KEYSPACE|COLLECTION|OWNED"
    r"|MATERIALIZED\s+VIEW)\b",
    re.I,
)
_SQL_TRUNCATE_RE = re.compile(r"\bTRUNCATE\s+(?:TABLE\s+)?[\w.\"`\[]", re.I)
_SQL_DELETE_RE = re.compile(r"\bDELETE\s+FROM\b", re.I)
_SQL_WHERE_RE = re.compile(r"\bWHERE\b", re.I)
_NOSQL_WIPE_RE = re.compile(
    r"\bFLUSH(?:ALL|DB)\b|\.drop(?:Database)?\s*\(|\.(?:deleteMany|remove)\s*\(\s*\{\s*\}\s*\)",
    re.I,
)


def sql_danger(text: str) -> str | None:
    """A description of the destructive statement in text, if any."""
    if _SQL_DROP_RE.search(text):
        return "drops a database object (SQL DROP)"
    if _SQL_TRUNCATE_RE.search(text):
        return "empties a table (SQL TRUNCATE)"
    if _SQL_DELETE_RE.search(text):
        for statement in text.split(";"):
            if _SQL_DELETE_RE.search(statement) and not _SQL_WHERE_RE.search(statement):
                return "deletes every row of a table (DELETE without WHERE)"
    if _NOSQL_WIPE_RE.search(text):
        return "wipes a datastore (FLUSHALL / drop / deleteMany({}))"
    return None


def rule_sql(inv: Invocation, ctx: Context) -> None:
    parts = list(inv.args)
    source = stdin_of(inv.cmd)
    if source.kind == "literal":
        parts.append(source.text)
    what = sql_danger("\n".join(parts))
    if what:
        ctx.approval("dangerous.sql_destructive", what, inv.segment)


def rule_dropdb(inv: Invocation, ctx: Context) -> None:
    if inv.name == "dropdb" or "drop" in inv.args:
        ctx.approval("dangerous.sql_destructive", f"drops a database ({inv.name})", inv.segment)


# -- services and Herald's gateway ------------------------------------------------

_SERVICE_STOP_ARGS = frozenset({"stop", "disable", "kill", "force-stop", "down", "d", "k", "exit",
                                "x", "unload", "bootout", "remove", "shutdown", "force-shutdown",
                                "restart", "try-restart", "force-restart", "condrestart",
                                "force-reload", "kickstart", "t", "term", "reload-or-restart",
                                "zap"})  # fmt: skip


def _stop_service(inv: Invocation, ctx: Context, names: list[str]) -> None:
    if any("herald" in n.lower() for n in names):
        ctx.approval(
            "dangerous.herald_gateway", "stops or restarts Herald's own gateway", inv.segment
        )
    else:
        ctx.approval(
            "dangerous.service_stop", f"stops or restarts a service ({inv.name})", inv.segment
        )


def rule_service_tools(inv: Invocation, ctx: Context) -> None:
    args = [a for a in inv.args if not a.startswith("-")]
    if inv.name in ("service", "rc-service"):
        if len(args) >= 2 and args[1] in _SERVICE_STOP_ARGS:
            _stop_service(inv, ctx, args[:1])
    elif args and args[0] in _SERVICE_STOP_ARGS:
        _stop_service(inv, ctx, args[1:])


def rule_initd_script(inv: Invocation, ctx: Context) -> None:
    if inv.args[:1] and inv.args[0] in _SERVICE_STOP_ARGS:
        _stop_service(inv, ctx, [inv.words[0].text])


def rule_herald(inv: Invocation, ctx: Context) -> None:
    args = set(inv.args)
    if "gateway" in args and args & {"stop", "restart", "uninstall", "kill", "down"}:
        ctx.approval("dangerous.herald_gateway", "stops Herald's own gateway", inv.segment)
    # `herald checkpoints prune|restore` (the undo history) is an admin command like
    # every other: control.admin (herald.safety.rules_control) decides it.


# -- containers, clusters, clouds -----------------------------------------------

_DOCKER_VALUES = frozenset({"-H", "--host", "-c", "--context", "--config", "-l", "--log-level",
                            "-f", "--file", "-p", "--project-name", "--filter", "--env-file",
                            "--profile", "--project-directory"})  # fmt: skip


def _positionals(args: list[str], takes_value: frozenset[str]) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(args):
        if args[i] in takes_value:
            i += 2
            continue
        if not args[i].startswith("-"):
            out.append(args[i])
        i += 1
    return out


def rule_containers(inv: Invocation, ctx: Context) -> None:
    pos = _positionals(inv.args, _DOCKER_VALUES)
    args = set(inv.args)
    what = ""
    removing = pos[:1] in (["rm"], ["rmi"]) or pos[:2] in (
        ["container", "rm"],
        ["container", "remove"],
        ["image", "rm"],
        ["image", "remove"],
    )
    forced = any(
        a == "--force" or (a.startswith("-") and not a.startswith("--") and "f" in a)
        for a in inv.args
    )
    if "prune" in pos[:3]:
        what = f"deletes unused containers, images, networks or volumes ({inv.name} … prune)"
    elif removing and (forced or any(w.dynamic for w in inv.arg_words)):
        what = f"force-removes containers or images, running ones too ({inv.name} rm -f)"
    elif pos[:2] in (["volume", "rm"], ["volume", "remove"]) or pos[:2] == ["system", "reset"]:
        what = f"deletes container volumes and their data ({inv.name})"
    elif "down" in pos[:2] and args & {"-v", "--volumes", "--rmi"}:
        what = "removes a compose project together with its volumes"
    if what:
        ctx.approval("dangerous.container_prune", what, inv.segment)


def rule_infra(inv: Invocation, ctx: Context) -> None:
    name, args = inv.name, inv.args
    pos = [a for a in args if not a.startswith("-")]
    what = ""
    if name in ("terraform", "tofu", "terragrunt"):
        if "destroy" in pos[:2] or (
            "apply" in pos[:2] and ("-destroy" in args or "--destroy" in args)
        ):
            what = f"destroys managed infrastructure ({name} destroy)"
    elif name == "pulumi":
        if "destroy" in pos[:2] or pos[:2] == ["stack", "rm"]:
            what = "destroys managed infrastructure (pulumi destroy)"
    elif name in ("kubectl", "oc"):
        dry_run = any(a.startswith("--dry-run") and a != "--dry-run=none" for a in args)
        if "delete" in pos[:3] and not dry_run:
            what = f"deletes cluster resources ({name} delete)"
        elif "drain" in pos[:3] and not dry_run:
            what = f"evicts every pod from a node ({name} drain)"
    elif name == "helm":
        if pos[:1] in (["uninstall"], ["delete"], ["del"], ["un"]) and "--dry-run" not in args:
            what = "uninstalls a release and deletes its resources (helm uninstall)"
    elif name == "aws":
        if (
            any(p.startswith(("delete-", "terminate-")) for p in pos)
            or "rb" in pos[:2]
            or (pos[:2] == ["s3", "rm"] and "--recursive" in args)
        ):
            what = "deletes cloud resources (aws)"
    elif name in ("gcloud", "az"):
        if "delete" in pos:
            what = f"deletes cloud resources ({name} … delete)"
    elif name == "gsutil" and ("rb" in pos or ("rm" in pos and set(args) & {"-r", "-R", "-a"})):
        what = "deletes cloud storage (gsutil)"
    if what:
        ctx.approval("dangerous.infra_destroy", what, inv.segment)


# -- firewalls --------------------------------------------------------------------

IPTABLES = frozenset({"iptables", "ip6tables", "iptables-nft", "ip6tables-nft", "iptables-legacy",
                      "ip6tables-legacy", "ebtables", "arptables"})  # fmt: skip
_FIREWALL_CMD_FLAGS = frozenset({"--panic-on", "--panic-off", "--complete-reload"})


def _iptables_danger(args: list[str]) -> str:
    for i, arg in enumerate(args):
        if arg in ("--flush", "--delete-chain") or re.fullmatch(r"-[a-zA-Z]*[FX]", arg):
            return f"flushes firewall rules ({arg})"
        if arg in ("-P", "--policy") and i + 2 < len(args) and args[i + 2].upper() == "ACCEPT":
            return f"opens the firewall: default policy ACCEPT for {args[i + 1]}"
    return ""


def rule_firewall(inv: Invocation, ctx: Context) -> None:
    name, args = inv.name, inv.args
    pos = [a for a in args if not a.startswith("-")]
    what = ""
    if name in IPTABLES:
        what = _iptables_danger(args)
    elif name == "nft":
        if pos[:1] == ["flush"] or pos[:2] in (["delete", "table"], ["delete", "chain"]):
            what = f"flushes or deletes firewall rules (nft {' '.join(pos[:2])})"
    elif name == "ufw":
        if pos[:1] in (["disable"], ["reset"]) or pos[:2] == ["default", "allow"]:
            what = f"turns the firewall off or resets it (ufw {' '.join(pos[:2])})"
    elif name == "pfctl":
        if any(re.fullmatch(r"-[a-zA-Z]*[dF][a-zA-Z]*", a) for a in args):
            what = "disables or flushes the packet filter (pfctl)"
    elif name == "firewall-cmd":
        flags = {a.split("=", 1)[0] for a in args}
        if flags & _FIREWALL_CMD_FLAGS or "--set-default-zone=trusted" in args:
            what = "switches the firewall's panic mode or opens every port (firewall-cmd)"
    elif name in ("netsh", "netsh.exe"):
        lowered = [a.lower() for a in args]
        if ("advfirewall" in lowered and "off" in lowered) or (
            "firewall" in lowered and "disable" in lowered
        ):
            what = "turns the Windows firewall off (netsh)"
    if what:
        ctx.approval("dangerous.firewall", what, inv.segment)


def rule_crontab(inv: Invocation, ctx: Context) -> None:
    opts = parse_options(inv.arg_words, short_values="uT")
    if opts.has("-r"):
        ctx.approval("dangerous.crontab", "removes every scheduled job (crontab -r)", inv.segment)
    elif opts.has("-e") or opts.positional:
        ctx.approval(
            "dangerous.crontab", "replaces or edits the scheduled jobs (crontab)", inv.segment
        )


# -- writes to sensitive places --------------------------------------------------

_COPIERS = {"cp": "tS", "mv": "tS", "install": "tmogS", "ln": "tS", "rsync": "efT",
            "scp": "PiocFlSJ", "rcp": ""}  # fmt: skip
_WRITE_REDIRECTS = frozenset({">", ">>", ">|", "<>", "&>", "&>>", ">&"})


def _copier_targets(inv: Invocation) -> tuple[list[str], list[str]]:
    """(destinations, moved-away sources) of cp/mv/install/ln/rsync/scp."""
    opts = parse_options(inv.arg_words, short_values=_COPIERS[inv.name],
                         long_values={"--target-directory", "--suffix", "--mode", "--owner",
                                      "--group", "--rsh", "--filter"},
                         stop_at_positional=False)  # fmt: skip
    files = [w.text for w in opts.positional]
    target_dir = opts.value("-t", "--target-directory")
    if target_dir is not None:
        return [target_dir], files if inv.name == "mv" else []
    if len(files) < 2:
        return [], []
    return [files[-1]], files[:-1] if inv.name == "mv" else []


def write_targets(inv: Invocation) -> tuple[list[str], list[str]]:
    """(paths whose contents change, paths removed) by this invocation. Three rule
    families judge these paths (sensitive files, start-up files, the control plane):
    worked out once per invocation. Callers must not change the lists."""
    found = inv.memo.get("write_targets")
    if found is None:
        found = inv.memo["write_targets"] = _write_targets(inv)
    return found


_PERL_RUBY_RE = re.compile(r"(perl|ruby)[\d.]*")


def _write_targets(inv: Invocation) -> tuple[list[str], list[str]]:
    name, args = inv.name, inv.args
    if name in _COPIERS:
        return _copier_targets(inv)
    if name in ("tee", "sponge", "sudoedit", "truncate"):
        opts = parse_options(inv.arg_words, short_values="sr", stop_at_positional=False)
        return [w.text for w in opts.positional], []
    if name == "dd":
        return [a[3:] for a in args if a.startswith("of=")], []
    if name in ("rm", "unlink", "srm", "rmdir", "shred"):
        return [], [a for a in args if not a.startswith("-")]
    if name == "sed" or _PERL_RUBY_RE.fullmatch(name):
        if not any(a.startswith("-i") or a == "--in-place" or a.startswith("--in-place=")
                   or re.fullmatch(r"-[a-zA-Z]*i[^-]*", a) for a in args):  # fmt: skip
            return [], []
        takes = "ef" if name == "sed" else "eEMI"
        opts = parse_options(inv.arg_words, short_values=takes, long_values={"--expression", "--file"},
                             stop_at_positional=False)  # fmt: skip
        files = [w.text for w in opts.positional]
        if name == "sed" and not opts.has("-e", "-f", "--expression", "--file"):
            files = files[1:]
        return files, []
    if name in ("curl", "wget"):
        values = parse_options(inv.arg_words, short_values="oOdHFTuXAeEPw",
                               long_values={"--output", "--output-document"},
                               stop_at_positional=False)  # fmt: skip
        out = (
            values.values("-o", "--output")
            if name == "curl"
            else values.values("-O", "--output-document")
        )
        return [o for o in out if o != "-"], []
    if name == "ssh-keygen":
        opts = parse_options(inv.arg_words, short_values="fCtbNnOIsVzZaEDGKmMPrSTwY")
        if not opts.has("-l", "-y", "-F", "-R", "-e", "-i", "-B"):
            return opts.values("-f"), []
    return [], []


def judge_write(path: str, segment: str, ctx: Context, *, deleting: bool = False) -> None:
    canonical_path = ctx.resolve(path.strip())
    if not canonical_path:
        return
    if not deleting and is_block_device(canonical_path):
        ctx.hardline(
            "hardline.block_device_write", f"writes directly to the disk {canonical_path}", segment
        )
        return
    if not deleting and canonical_path == "/proc/sysrq-trigger":
        ctx.hardline(
            "hardline.shutdown", "writes to /proc/sysrq-trigger (can reboot or halt)", segment
        )
        return
    what = sensitive_target(canonical_path, ctx.env)
    if what:
        verb = "deletes" if deleting else "writes to"
        ctx.approval("dangerous.sensitive_write", f"{verb} {what} ({canonical_path})", segment)
    if not deleting:
        judge_host_executed(canonical_path, segment, ctx)


def rule_writes(inv: Invocation, ctx: Context) -> None:
    writes, deletes = write_targets(inv)
    for path in writes:
        judge_write(path, inv.segment, ctx)
    for path in deletes:
        judge_write(path, inv.segment, ctx, deleting=True)


def is_file_write(redirect: Redirect) -> bool:
    if redirect.op not in _WRITE_REDIRECTS or redirect.target is None:
        return False
    target = redirect.target.text
    return not (redirect.op == ">&" and (target.isdigit() or target == "-"))


def check_redirects(cmd: SimpleCommand, ctx: Context) -> None:
    for redirect in cmd.redirects:
        if is_file_write(redirect):
            assert redirect.target is not None
            judge_write(redirect.target.text, cmd.source, ctx)


# -- uploads of secrets ------------------------------------------------------------

UPLOADERS = frozenset({"curl", "wget", "http", "https", "xh", "xhs", "scp", "sftp", "rsync",
                       "nc", "ncat", "netcat", "socat", "telnet", "ftp"})  # fmt: skip
_SECRET_READERS = frozenset({"cat", "base64", "gzip", "xxd", "head", "tail", "tar", "zip", "gpg",
                             "openssl", "od", "hexdump", "less", "more", "strings", "tac"})  # fmt: skip
_ENV_DUMPERS = frozenset({"env", "printenv", "set", "export", "declare"})


_FILTERS = frozenset({"base64", "base32", "gzip", "xz", "bzip2", "zstd", "xxd", "od", "hexdump",
                      "openssl", "gpg", "tee", "cat", "head", "tail", "rev", "tr", "sort",
                      "uniq", "jq", "sed", "awk"})  # fmt: skip


def _reads_secret(cmd: SimpleCommand | None, ctx: Context, depth: int = 0) -> bool:
    """cmd prints a secret: it reads one itself, or passes on (encoded,
    compressed) what an earlier command of its pipeline read."""
    if cmd is None or not cmd.words or depth > 8:
        return False
    name = command_name(cmd.words[0].text)
    if name in _ENV_DUMPERS and (name != "export" or "-p" in cmd.argv):
        return True
    if name in _SECRET_READERS and any(
        secret_source(w.text, ctx.env) for w in cmd.words[1:] if not w.text.startswith("-")
    ):
        return True
    if name in _FILTERS:
        source = stdin_of(cmd)
        if source.kind == "file" and secret_source(source.text, ctx.env):
            return True
        return _reads_secret(cmd.stdin_from, ctx, depth + 1)
    return False


def _word_reads_secret(word: Word, ctx: Context) -> bool:
    return any(_reads_secret(c, ctx) for sub in word.subs for c in sub.commands)


def _upload_path(arg: str) -> str | None:
    """The local file an upload argument names (@file, name=@file, name@file)."""
    if arg.startswith("@"):
        return arg[1:]
    for sep in ("=@", "@"):
        if sep in arg and not arg.startswith("-"):
            return arg.split(sep, 1)[1].split(";", 1)[0]
    return None


def rule_exfiltration(inv: Invocation, ctx: Context) -> None:
    name, words = inv.name, inv.arg_words
    secret = ""
    for i, word in enumerate(words):
        text = word.text
        if _word_reads_secret(word, ctx):
            secret = word.raw
            break
        path = _upload_path(text)
        if name in ("wget",) and text.startswith(("--post-file=", "--body-file=")):
            path = text.split("=", 1)[1]
        if name == "curl" and i > 0 and words[i - 1].text in ("-T", "--upload-file"):
            path = text
        if name in ("scp", "sftp", "rsync") and not text.startswith("-"):
            path = text
        if path and path != "-" and secret_source(path, ctx.env):
            secret = path
            break
    if not secret and name in ("scp", "rsync", "sftp"):
        return
    if not secret:
        source = stdin_of(inv.cmd)
        if source.kind == "file" and secret_source(source.text, ctx.env):
            secret = source.text
        elif inv.cmd.stdin_from is not None and _reads_secret(inv.cmd.stdin_from, ctx):
            secret = "a secret file or the environment"
    if secret:
        if name in ("scp", "rsync", "sftp") and not any(":" in w.text for w in words):
            return
        ctx.approval(
            "dangerous.exfiltration", f"sends {secret} over the network ({name})", inv.segment
        )
