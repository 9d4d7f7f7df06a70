"""`check_command`: decide whether a shell command may run.

Pipeline: parser limits → normalisation (:mod:`.normalize`) → parsing
(:mod:`.shell_lex`) → every simple command, with wrappers peeled off and
carrier payloads checked recursively, goes through the rule table
(:mod:`.command_rules`). The worst finding wins: any hard-line finding makes
the verdict ``hardline``, else any dangerous finding makes it ``approval``,
else ``allow``.

``check_command`` is pure (no I/O, no model call, no look at the real
environment): ``env`` is the environment the command will run in, used to
resolve ``$VARS`` (and command names such as ``${X:-rm}``) and to recognise
the ``HOME`` and ``HERALD_HOME`` paths. Without ``env``, ``~``, ``$HOME`` and ``${HOME}`` still mean the
home directory and ``$HERALD_HOME`` means ``~/.herald``.

Commands over the parser limits are refused with rule
``hardline.parser_limits``; the caller (the terminal tool) then saves them
with `save_blocked_script` so the model can run them as a script.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from herald.config.home import HeraldHome
from herald.safety.command_rules import check_invocation, check_script
from herald.safety.control_plane import OWNER_APPROVAL_RULES
from herald.safety.invocation import Context, Hit
from herald.safety.normalize import normalize_command
from herald.safety.rules_workflow import is_file_write
from herald.safety.shell_ast import MAX_SEGMENTS, Budget, ParseLimitError
from herald.safety.shell_lex import parse

MAX_COMMAND_CHARS = 128_000
MAX_UNSEPARATED_CHARS = 4_096
PARSER_LIMITS_RULE = "hardline.parser_limits"
_SEPARATOR_RE = re.compile(r"[\n;&|]")
_QUIET_REDIRECT_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})

VerdictLevel = Literal["hardline", "approval", "allow"]


@dataclass(frozen=True)
class CommandVerdict:
    """The decision for one command.

    level: ``hardline`` (refused whatever the configuration), ``approval``
    (dangerous: needs approval unless approvals are off) or ``allow``.
    rule: stable id of the deciding rule (``allow`` when nothing matched).
    description: a human sentence saying what the command would do.
    segment: the part of the command that triggered the rule.
    rules: every rule id that matched, deciding one first.
    """

    level: VerdictLevel
    rule: str
    description: str
    segment: str = ""
    rules: tuple[str, ...] = ()

    @property
    def is_hardline(self) -> bool:
        return self.level == "hardline"

    @property
    def needs_approval(self) -> bool:
        return self.level == "approval"

    @property
    def allowed(self) -> bool:
        return self.level == "allow"

    @property
    def owner_only(self) -> bool:
        """Needs approval for a Herald admin command (a ``control.*`` rule): only a
        present human may allow it, once; mode off, patterns and the judge cannot."""
        return self.level == "approval" and any(r in OWNER_APPROVAL_RULES for r in self.rules)


ALLOW_VERDICT = CommandVerdict("allow", "allow", "no safety rule matched")


@dataclass(frozen=True)
class CommandAnalysis:
    """A verdict plus what the approval layer needs to match patterns."""

    verdict: CommandVerdict
    normalized: str  # the command after normalisation
    segments: tuple[str, ...]  # every simple command, nested ones included
    compound: bool  # more than one command, carriers, heredocs or file writes


def _parser_limit(reason: str) -> CommandAnalysis:
    verdict = CommandVerdict(
        "hardline",
        PARSER_LIMITS_RULE,
        f"the command is too large or complex to check ({reason}); it was not run. "
        "Save it to a script file and run the script instead.",
        rules=(PARSER_LIMITS_RULE,),
    )
    return CommandAnalysis(verdict, "", (), True)


def _verdict(hits: list[Hit]) -> CommandVerdict:
    if not hits:
        return ALLOW_VERDICT
    # a hard-line finding first, then an owner-only (control.*) one: the prompt
    # and refusal must name what makes the command non-liftable
    decisive = next(
        (h for h in hits if h.level == "hardline"),
        next((h for h in hits if h.rule in OWNER_APPROVAL_RULES), hits[0]),
    )
    rules = tuple(dict.fromkeys([decisive.rule, *(h.rule for h in hits)]))
    description = decisive.description
    return CommandVerdict(decisive.level, decisive.rule, description, decisive.segment, rules)


def _check_payload(text: str, segment: str, ctx: Context) -> None:
    child = dataclasses.replace(ctx, depth=ctx.depth + 1)
    script = parse(normalize_command(text), env=ctx.env, budget=ctx.budget, depth=child.depth)
    check_script(script, child)


def analyze_command(command: str, *, env: Mapping[str, str] | None = None) -> CommandAnalysis:
    """check_command with the details the approval policy needs."""
    return _analyze(command, env, details=True)


def _analyze(command: str, env: Mapping[str, str] | None, *, details: bool) -> CommandAnalysis:
    """The check; with details, also whether the command is compound and its segments
    (what the approval policy needs, and check_command does not)."""
    if len(command) > MAX_COMMAND_CHARS:
        return _parser_limit(f"more than {MAX_COMMAND_CHARS:,} characters")
    if len(command) > MAX_UNSEPARATED_CHARS and not _SEPARATOR_RE.search(command):
        return _parser_limit(f"more than {MAX_UNSEPARATED_CHARS:,} characters with no separator")
    normalized = normalize_command(command)
    ctx = Context(
        env=env,
        budget=Budget(),
        check_code=_check_payload,
        check_invocation=check_invocation,
        cwd=(env or {}).get("PWD") or None,
    )
    try:
        script = parse(normalized, env=env, budget=ctx.budget)
        check_script(script, ctx)
    except ParseLimitError as exc:
        return _parser_limit(str(exc))
    except RecursionError:
        return _parser_limit("nested too deeply")
    verdict = _verdict(ctx.hits)
    if verdict.level != "allow" and not verdict.segment:  # position-less findings
        verdict = dataclasses.replace(verdict, segment=normalized.strip()[:200])
    if not details:
        return CommandAnalysis(verdict, normalized, (), False)
    commands = list(script.walk())
    compound = (
        len(commands) != 1
        or ctx.payloads > 0
        or bool(script.subscripts)
        or any(
            r.heredoc is not None
            or (
                is_file_write(r)
                and r.target is not None
                and r.target.text not in _QUIET_REDIRECT_TARGETS
            )
            for c in commands
            for r in c.redirects
        )
    )
    segments = tuple(dict.fromkeys(s for s in ctx.segments if s))
    return CommandAnalysis(verdict, normalized, segments, compound)


def check_command(command: str, *, env: Mapping[str, str] | None = None) -> CommandVerdict:
    """Decide whether command may run: ``hardline``, ``approval`` or ``allow``."""
    return _analyze(command, env, details=False).verdict


def save_blocked_script(command: str, home: HeraldHome) -> Path:
    """Write a command refused for its size to
    ``$HERALD_HOME/cache/blocked-scripts/<time>-<hash>.sh`` (owner-only) and
    return the path, so the model can run it as a script through the normal
    path. Called by the terminal tool for ``hardline.parser_limits``."""
    directory = home.cache_dir / "blocked-scripts"
    directory.mkdir(parents=True, exist_ok=True)
    try:
        os.chmod(directory, 0o700)
    except OSError:
        pass
    digest = hashlib.sha256(command.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    path = directory / f"{time.strftime('%Y%m%d-%H%M%S')}-{digest}.sh"
    body = command if command.startswith("#!") else "#!/usr/bin/env bash\n" + command
    if not body.endswith("\n"):
        body += "\n"
    fd, tmp = tempfile.mkstemp(prefix=".blocked-", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape") as fh:
            fh.write(body)
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


__all__ = [
    "ALLOW_VERDICT",
    "MAX_COMMAND_CHARS",
    "MAX_SEGMENTS",
    "MAX_UNSEPARATED_CHARS",
    "PARSER_LIMITS_RULE",
    "CommandAnalysis",
    "CommandVerdict",
    "analyze_command",
    "check_command",
    "save_blocked_script",
]
