"""Herald's control plane, defined once (DESIGN.md invariant 16).

The control plane is what decides Herald's security posture: its home's control
files (``config.yaml``, ``.env``, ``state.db*``, ``kanban.db*``, ``cron/``,
``plugins/``, ``SOUL.md``, the web login token, the pairing store, the gateway's
run files, every ``profiles/<name>/`` home the same), Herald's own installed code
and entry script, and Herald's admin commands (``herald …`` however spelled).
It is the owner's alone: a tool call (terminal, file tools, anything behind the
write gate) may read it where that prints no secret, and may ask a present human
for a few admin commands, but it never changes posture.

This module only classifies; :mod:`herald.safety.rules_control` turns the
classification into ``control.*`` findings, the file tools ask
`secret_read_refusal`, and `herald.safety.approval.decide` makes the
``control.*`` approval verdicts impossible to lift (``approvals.mode: off``,
always-allow patterns and the smart judge do not apply). Pure: no I/O.
"""

from __future__ import annotations

import fnmatch
import functools
import posixpath
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from herald.safety.paths import canonical

# -- rule ids -------------------------------------------------------------------

POSTURE = "control.posture_change"
TOKEN = "control.token"
PAIRING = "control.pairing"
PLUGIN = "control.plugin_enable"
FILE_WRITE = "control.file_write"
SECRET_READ = "control.secret_read"
MEMORY = "control.memory_side_door"
CODE = "control.herald_code"
ADMIN = "control.admin"
NESTED = "control.nested_agent"

# The approval-level ids: a live human may allow them once; nothing else can.
OWNER_APPROVAL_RULES = frozenset({ADMIN, NESTED})

CONTROL_RULES: dict[str, tuple[str, str]] = {
    POSTURE: ("hardline", "a tool call changing Herald's security posture (herald config set approvals.*/terminal.*/budget.*/gateway.*/…, config edit, setup, kanban approve)"),
    TOKEN: ("hardline", "minting or reading a web/API login token (herald web token)"),
    PAIRING: ("hardline", "approving a chat pairing (herald pairing approve)"),
    PLUGIN: ("hardline", "enabling, creating or installing plugins or MCP servers"),
    FILE_WRITE: ("hardline", "writing, deleting, moving, linking or chmod-ing a control file of Herald's home (config.yaml, .env, state.db, cron/, plugins/, profiles/…)"),
    SECRET_READ: ("hardline", "reading Herald's secrets (.env, web token, pairing store, credentials) from a tool"),
    MEMORY: ("hardline", "writing memories/ or skills/ around the memory and skill_manage tools' scans"),
    CODE: ("hardline", "changing Herald's installed code or entry script, or inline code that drives Herald"),
    ADMIN: ("approval", "a Herald admin command (herald cron add, config set model.name, kanban writes …): a present human may allow it once; never unattended, under delegation, by mode off, patterns or the judge"),
    NESTED: ("approval", "a nested Herald agent (herald chat, herald -z, cron run, kanban work, mcp serve …): as control.admin"),
}  # fmt: skip

# -- files ----------------------------------------------------------------------

Area = Literal["secret", "control", "memory", "code"]

# Relative to a home; everything else under a home keeps the ordinary
# ``dangerous.sensitive_write`` treatment (cache/, logs/, kanban/tasks/ are free).
_SECRET_FILES = (".env", "web/token.json", "gateway/pairing.json", "cache/credentials.json")
# web/: login material; backups/: copies of the whole home (every identity's history,
# and .env when made with --include-secrets), so reading one is reading the secrets
_SECRET_DIRS = frozenset({"web", "backups"})
_CONTROL_TOP = frozenset({"config.yaml", "state.db", "kanban.db", "cron", "plugins", "SOUL.md",
                          "gateway", "web", "profiles"})  # fmt: skip
_MEMORY_TOP = frozenset({"memories", "skills"})
# Directories whose recursive reading would print a secret.
_SECRET_HOLDERS = frozenset({"", "web", "gateway", "cache", "profiles", "backups"})

# Herald's own code: this package and the entry scripts of the running venv.
PACKAGE_DIR = str(Path(__file__).resolve().parents[1])
ENTRY_SCRIPTS = tuple(
    dict.fromkeys(
        [
            posixpath.join(sys.prefix, "bin", "herald"),
            posixpath.join(posixpath.dirname(sys.executable), "herald"),
        ]
    )
)


@dataclass(frozen=True)
class ControlPath:
    area: Area
    what: str  # a short name for people ("Herald's config.yaml")
    path: str  # the path as the command or tool named it (for messages)


def control_homes(env: Mapping[str, str] | None) -> list[str]:
    """Every Herald home a path may be in: ``~/.herald``, ``$HERALD_HOME`` and, when
    that is a profile's home, the base home it belongs to."""
    e = env or {}
    return list(_control_homes(e.get("HOME"), e.get("HERALD_HOME")))


@functools.lru_cache(maxsize=64)
def _control_homes(home_var: str | None, herald_var: str | None) -> tuple[str, ...]:
    env = {k: v for k, v in (("HOME", home_var), ("HERALD_HOME", herald_var)) if v is not None}
    homes = [canonical("~/.herald", env)]
    configured = herald_var
    if configured:
        home = canonical(configured, env)
        homes.append(home)
        m = re.fullmatch(r"(.+)/profiles/[^/]+", home)
        if m:
            homes.append(m.group(1))
    return tuple(dict.fromkeys(homes))


def _under(path: str, base: str) -> str | None:
    if path == base:
        return ""
    prefix = base.rstrip("/") + "/"
    return path[len(prefix) :] if path.startswith(prefix) else None


def _strip_profiles(rel: str) -> tuple[str, bool]:
    """``profiles/NAME/rest`` -> (rest, True): a profile is a complete home."""
    in_profile = False
    while True:
        parts = rel.split("/", 2)
        if parts[0] != "profiles" or len(parts) < 3:
            return rel, in_profile
        rel, in_profile = parts[2], True


def _classify_rel(rel: str) -> tuple[Area, str] | None:
    rel, in_profile = _strip_profiles(rel)
    top = rel.split("/", 1)[0]
    whose = "a profile's" if in_profile else "Herald's"
    if rel == "" or (top == "profiles" and rel.count("/") <= 1):
        return "control", f"{whose} home" if rel == "" else "Herald's profiles"
    if top == ".env" or top.startswith(".env.") or rel in _SECRET_FILES or top in _SECRET_DIRS:
        return "secret", f"{whose} secrets ({rel})"
    if top in _CONTROL_TOP or top.startswith(("config.yaml", "state.db", "kanban.db")):
        return "control", f"{whose} {rel}"
    if top in _MEMORY_TOP:
        return "memory", f"{whose} {top}/"
    return None


def classify_path(path: str, env: Mapping[str, str] | None = None) -> ControlPath | None:
    """What of the control plane `path` is (None: not part of it). A glob counts
    when it could name a control file."""
    p = canonical(path.strip(), env)
    if not p.startswith("/"):
        return None
    if any(ch in p for ch in "*?["):
        return _classify_glob(p, env)
    for home in control_homes(env):
        rel = _under(p, home)
        if rel is not None:
            found = _classify_rel(rel)
            return ControlPath(found[0], found[1], path.strip()) if found else None
    e = env or {}
    code, scripts = _code_locations(e.get("HOME"), e.get("HERALD_HOME"))
    if _under(p, code) is not None or p in scripts:
        return ControlPath("code", "Herald's installed code", path.strip())
    return None


@functools.lru_cache(maxsize=64)
def _code_locations(home_var: str | None, herald_var: str | None) -> tuple[str, frozenset[str]]:
    """Herald's installed package and entry scripts, as `canonical` spells them."""
    env = {k: v for k, v in (("HOME", home_var), ("HERALD_HOME", herald_var)) if v is not None}
    return canonical(PACKAGE_DIR, env), frozenset(canonical(s, env) for s in ENTRY_SCRIPTS)


_GLOB_PROBES = (
    "", ".env", "config.yaml", "state.db", "kanban.db", "cron/jobs.json", "plugins/x/plugin.py",
    "SOUL.md", "web/token.json", "gateway/pairing.json", "gateway/gateway.pid",
    "cache/credentials.json", "memories/MEMORY.md", "skills/x/SKILL.md",
    "profiles/p/.env", "profiles/p/config.yaml",
)  # fmt: skip
_AREA_ORDER: tuple[Area, ...] = ("secret", "control", "code", "memory")


def _glob_reaches(pattern: str, candidate: str) -> bool:
    """The shell glob `pattern` names `candidate` or a directory holding it. As in the
    shell, a component only matches a leading dot when it starts with one itself
    (``~/*`` does not reach ``~/.herald``)."""
    pats, parts = pattern.strip("/").split("/"), candidate.strip("/").split("/")
    if len(pats) > len(parts):
        return False
    for pat, part in zip(pats, parts, strict=False):
        if part.startswith(".") and not pat.startswith("."):
            return False
        if not fnmatch.fnmatchcase(part, pat):
            return False
    return True


def _classify_glob(pattern: str, env: Mapping[str, str] | None) -> ControlPath | None:
    hits: list[ControlPath] = []
    for home in control_homes(env):
        for probe in _GLOB_PROBES:
            candidate = posixpath.join(home, probe) if probe else home
            if _glob_reaches(pattern, candidate):
                found = _classify_rel(probe)
                if found:
                    hits.append(ControlPath(found[0], found[1], pattern))
    for area in _AREA_ORDER:
        for hit in hits:
            if hit.area == area:
                return hit
    return None


def holds_secrets(path: str, env: Mapping[str, str] | None = None) -> bool:
    """A directory of a Herald home that a recursive read would print secrets from
    (the home itself, profiles/, a profile, web/, gateway/, cache/)."""
    p = canonical(path.strip(), env)
    for home in control_homes(env):
        rel = _under(p, home)
        if rel is None:
            continue
        rel, _ = _strip_profiles(rel)
        if rel in _SECRET_HOLDERS or (rel.startswith("profiles/") and rel.count("/") == 1):
            return True
    return False


def secret_read_refusal(path: str, env: Mapping[str, str] | None = None) -> str | None:
    """The refusal for a tool reading `path`, or None when the read may go on."""
    found = classify_path(path, env)
    if found is None or found.area != "secret":
        return None
    return (
        f"Refused: {found.path} is {found.what}; no tool may read Herald's secrets "
        f"[{SECRET_READ}]. If a value is needed, ask the owner; do not try another way."
    )


# -- admin commands ---------------------------------------------------------------

AdminKind = Literal["allow", "admin", "nested", "hardline"]


@dataclass(frozen=True)
class AdminVerdict:
    kind: AdminKind
    rule: str
    description: str


_GLOBAL_VALUE = frozenset({"--profile", "-p"})
_GLOBAL_FLAGS = frozenset({"-v", "--verbose"})
# Read-only admin commands that print no secret (config.yaml holds only ${NAME}
# references to secrets, so `config show` is safe).
_READ_ONLY = frozenset({
    ("config", "path"), ("config", "show"), ("sessions", "list"), ("sessions", "show"),
    ("sessions", "export"), ("skills", "list"), ("skills", "show"), ("skills", "validate"),
    ("gateway", "status"), ("pairing", "list"), ("kanban", "list"), ("kanban", "show"),
    ("kanban", "board"), ("mcp", "list"), ("sandbox", "explain"), ("cron", "list"),
    ("cron", "show"), ("cron", "runs"), ("plugins", "list"), ("plugins", "info"),
    ("web", "status"), ("usage", ""),
})  # fmt: skip
_NESTED = frozenset({("chat", ""), ("acp", ""), ("mcp", "serve"), ("kanban", "work"),
                     ("kanban", "dispatch"), ("cron", "run"), ("cron", "tick"),
                     ("cron", "daemon"), ("gateway", "run")})  # fmt: skip
# Config keys an attended owner may let the agent change (preferences, not posture).
# Everything else (approvals, terminal, toolsets, guardrails, budget, gateway, mcp,
# plugins, delegation, credentials, model endpoints …) is posture.
_PREFERENCE_KEYS = ("model.name", "model.provider", "model.temperature", "model.max_tokens",
                    "auxiliary.name", "display.", "context.", "learning.", "curator.")  # fmt: skip


def is_posture_key(key: str) -> bool:
    key = key.strip().split("=", 1)[0]
    if not key or "$" in key or "*" in key:
        return True  # unknown at check time: assume the worst
    return not any(key == p or (p.endswith(".") and key.startswith(p)) for p in _PREFERENCE_KEYS)


def _owner_note(argv: Sequence[str]) -> str:
    shown = " ".join(argv)[:200]
    return f"only the owner may do that: they can run `herald {shown}` themselves"


def herald_argv(args: Sequence[str]) -> tuple[list[str], bool]:
    """(args without global options, whether a help/version flag makes it read-only)."""
    out: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a in _GLOBAL_VALUE:
            i += 2
            continue
        if a.startswith("--profile=") or a in _GLOBAL_FLAGS:
            i += 1
            continue
        out.append(a)
        i += 1
    # `config set` takes unknown options as values, so a help flag there is a value
    is_set = out[:2] == ["config", "set"]
    help_only = bool(out) and (
        out[0] in ("--version", "--help") or ("--help" in out and not is_set)
    )
    return out, help_only


def classify_admin(args: Sequence[str]) -> AdminVerdict:
    """What `herald ARGS` (any spelling of the command) does to the control plane."""
    argv, help_only = herald_argv(args)
    if help_only:
        return AdminVerdict("allow", "", "")
    positional = [a for a in argv if not a.startswith("-")]
    sub = positional[0] if positional else ""
    sub2 = positional[1] if len(positional) > 1 else ""
    if not sub or "-z" in argv[: argv.index(sub) if sub else len(argv)] or (sub, "") in _NESTED:
        return AdminVerdict("nested", NESTED, "starts a nested Herald agent (herald chat / -z)")
    if (sub, sub2) in _NESTED:
        return AdminVerdict("nested", NESTED, f"starts Herald agents (herald {sub} {sub2})")
    if (sub, sub2) in _READ_ONLY or (sub, "") in _READ_ONLY:
        return AdminVerdict("allow", "", "")
    if sub == "config" and sub2 == "set":
        key = positional[2] if len(positional) > 2 else ""
        if is_posture_key(key):
            return AdminVerdict(
                "hardline", POSTURE,
                f"changes Herald's security posture ({key or 'a config key'}); {_owner_note(argv)}",
            )  # fmt: skip
        return AdminVerdict("admin", ADMIN, f"changes Herald's configuration ({key})")
    if (sub, sub2) == ("backup", "restore") or sub == "import" or "--include-secrets" in argv:
        return AdminVerdict(
            "hardline", POSTURE,
            f"replaces Herald's config, secrets or history, or copies its secrets out; "
            f"{_owner_note(argv)}",
        )  # fmt: skip
    if (sub, sub2) in (("config", "edit"), ("kanban", "approve")) or sub == "setup":
        return AdminVerdict(
            "hardline", POSTURE, f"changes Herald's security posture; {_owner_note(argv)}"
        )
    if sub == "web" and sub2 == "token":
        return AdminVerdict(
            "hardline", TOKEN, f"mints a web login token into the tool output; {_owner_note(argv)}"
        )
    if sub == "pairing" and sub2 == "approve":
        return AdminVerdict(
            "hardline", PAIRING, f"grants a chat user access to Herald; {_owner_note(argv)}"
        )
    if sub in ("plugins", "mcp") and sub2 in ("enable", "new", "install", "add"):
        return AdminVerdict(
            "hardline", PLUGIN, f"enables or installs Herald plugins or MCP servers; {_owner_note(argv)}"
        )  # fmt: skip
    return AdminVerdict(
        "admin", ADMIN, f"runs a Herald admin command (herald {sub} {sub2})".replace(" )", ")")
    )


# An unknown program used exactly like Herald (an alias, a copy or symlink of the
# entry script): these argument shapes are Herald's and nobody else's.
_HERALD_SHAPES = (("config", "set"), ("config", "edit"), ("web", "token"),
                  ("pairing", "approve"), ("plugins", "enable"), ("plugins", "install"),
                  ("cron", "add"), ("kanban", "approve"))  # fmt: skip


_SHAPE_HEADS = frozenset(shape[0] for shape in _HERALD_SHAPES)


def looks_like_herald(args: Sequence[str]) -> bool:
    if _SHAPE_HEADS.isdisjoint(args):  # no shape can start: most commands end here
        return False
    argv, _ = herald_argv(args)
    positional = [a for a in argv if not a.startswith("-")]
    if tuple(positional[:2]) not in _HERALD_SHAPES:
        return False
    if positional[:2] == ["config", "set"]:  # `git config set …` is git's own
        return len(positional) > 2 and positional[2].split(".")[0] in _CONFIG_SECTIONS
    return True


_CONFIG_SECTIONS = frozenset({"model", "auxiliary", "agent", "credentials", "display",
                              "approvals", "toolsets", "guardrails", "terminal", "web",
                              "context", "memory", "skills", "curator", "learning", "gateway",
                              "kanban", "mcp", "cron", "delegation", "plugins", "budget"})  # fmt: skip

# Inline code that names Herald's package, command, home or its home variable.
HERALD_MENTION_RE = re.compile(r"(?<![\w.-])herald(?![\w-])|\.herald\b|HERALD_HOME", re.IGNORECASE)

__all__ = [
    "ADMIN",
    "CODE",
    "CONTROL_RULES",
    "ENTRY_SCRIPTS",
    "FILE_WRITE",
    "HERALD_MENTION_RE",
    "MEMORY",
    "NESTED",
    "OWNER_APPROVAL_RULES",
    "PACKAGE_DIR",
    "PAIRING",
    "PLUGIN",
    "POSTURE",
    "SECRET_READ",
    "TOKEN",
    "AdminVerdict",
    "ControlPath",
    "classify_admin",
    "classify_path",
    "control_homes",
    "herald_argv",
    "holds_secrets",
    "is_posture_key",
    "looks_like_herald",
    "secret_read_refusal",
]
