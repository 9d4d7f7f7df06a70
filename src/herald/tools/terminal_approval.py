"""The safety gate in front of every command the terminal tool runs (and every
input `process` writes to a background process).

Order: the hard-line floor (`check_command`; commands over the parser limits
are saved as a script the model can run instead), then the approval policy
(`herald.safety.ApprovalPolicy`): deny globs, ``approvals.mode``, session and
always-allow patterns, the smart-mode judge, a human; with no human, the
unattended allowlist (known read-only commands, ``approvals.unattended_allow`` and the
surface's own ``ctx.unattended_allow``), refused in one line that names the key or
flag that would allow the command (``ctx.unattended_hint``). Commands approved "for this session" are kept in
`SessionApprovals` (``ctx.own(SessionApprovals)``); the smart-mode judge is
``ctx.judge``, installed by a surface that has an auxiliary model (without it
smart mode asks the human).

Anything refused raises `CommandRefused`, which the registry turns into an
error result carrying exactly its message.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import herald.safety as safety
from herald.config import (
    ConfigError,
    HeraldConfig,
    HeraldHome,
    resolve_home,
    update_raw,
)
from herald.environments import Environment
from herald.safety import redact
from herald.tools.ports import ChangeGuard
from herald.tools.registry import ToolArgumentError, ToolContext

if TYPE_CHECKING:
    from herald.safety import ApprovalDecision, ApprovalPrompt, SandboxScope

# The command rules and the approval policy (herald.safety) load when the first command
# is checked, not when a tool module that may run one is imported.


@dataclass
class SessionApprovals:
    """Command patterns the human approved for the rest of this session."""

    patterns: set[str] = field(default_factory=set)


_NO_RETRY = "Do not retry the same command or a variant of it"
# Starts every refusal by the unattended allowlist (surfaces collect them for the owner).
UNATTENDED_REFUSAL = "Not run: `"


class CommandRefused(ToolArgumentError):
    """A command (or a failure around it) reported to the model as an error result
    with exactly this message."""


def check_env(ctx: ToolContext, environment: Environment, cwd: str) -> dict[str, str]:
    """What `check_command` needs to know about where the command will run. The
    sudo password is passed as presence only: its value never leaves the accessor."""
    home = ctx.home.root if ctx.home is not None else resolve_home(create=False).root
    env = {"HOME": environment.resolve("~"), "HERALD_HOME": str(home), "PWD": cwd}
    if ctx.secrets is not None and ctx.secrets.get("HERALD_SUDO_PASSWORD"):
        env["HERALD_SUDO_PASSWORD"] = "1"
    return env


def sandbox_scope(
    environment: Environment, checkpoint: ChangeGuard | None = None
) -> SandboxScope | None:
    """The sandbox the relaxed approval policy may rely on (None off a sandbox).
    Damage to the working directory is relaxed only where `checkpoint` (the turn's
    checkpoint step, which ran before this command) says its newest checkpoint covers
    every path the command can reach; without one it keeps asking."""
    spec = getattr(environment, "sandbox_spec", None)
    if spec is None:
        return None
    checkpointed = None if checkpoint is None else checkpoint.covers
    home = environment.resolve("~")  # the sandbox's own home directory
    return safety.SandboxScope(
        backend=environment.name,
        workdir=spec.workdir,
        writable_outside=spec.rw_paths_outside_workdir(),
        network=spec.network,
        private_dirs=("/tmp", home),
        home=home,
        checkpointed=checkpointed,
    )


def _blocked_script_message(command: str, ctx: ToolContext, environment: Environment) -> str:
    home = ctx.home or resolve_home()
    local_path = safety.save_blocked_script(command, home)
    run_path = str(local_path)
    if environment.name != "local":  # the model's commands run on the other host
        remote = environment.resolve(f"~/.cache/herald/blocked-scripts/{local_path.name}")
        environment.write_bytes(remote, local_path.read_bytes())
        run_path = remote
    return (
        f"Refused: the command is too large or complex to check safely [{safety.PARSER_LIMITS_RULE}]; "
        f"it was not run. It was saved as a script at {run_path} (a copy is at {local_path}). "
        f"Review it, then run it as a script: bash {run_path}"
    )


def ask_human(
    ask: Callable[[ApprovalPrompt], str | None],
    prompt: ApprovalPrompt,
    timeout: float,
    cancel: threading.Event,
) -> str | None:
    """The human's answer, or None when none came within `timeout` (a denial) or
    the turn was interrupted. Enforced here so a surface cannot hang the agent."""
    answer: list[str | None] = [None]
    done = threading.Event()

    def run() -> None:
        try:
            answer[0] = ask(prompt)
        except Exception:  # a broken prompt is no answer, never an approval
            answer[0] = None
        finally:
            done.set()

    threading.Thread(target=run, name="approval-prompt", daemon=True).start()
    deadline = time.monotonic() + timeout
    while not done.wait(0.05):
        if time.monotonic() >= deadline or cancel.is_set():
            return None
    return answer[0]


def persist_always_pattern(pattern: str, config: HeraldConfig, home: HeraldHome | None) -> str:
    """Add `pattern` to ``approvals.always_allow`` in memory and in config.yaml;
    returns why saving failed ("" on success; the approval stands either way)."""
    if pattern not in config.approvals.always_allow:
        config.approvals.always_allow.append(pattern)
    if home is None:
        return ": this session has no Herald home"
    path = home.config_path

    def add_pattern(data: dict[str, object]) -> None:
        section = data.setdefault("approvals", {})
        if not isinstance(section, dict):
            raise ConfigError(f"approvals in {path} is not a section")
        patterns = section.setdefault("always_allow", [])
        if not isinstance(patterns, list):
            raise ConfigError(f"approvals.always_allow in {path} is not a list")
        if pattern not in patterns:
            patterns.append(pattern)

    try:
        # Under the file's lock, re-read and compare-and-swap (herald.config.shared_file),
        # so a concurrent `herald config set` or another approval is not overwritten.
        update_raw(path, add_pattern)
    except (ConfigError, OSError) as exc:
        return f" to {path}: {exc}"
    return ""


def unattended_refusal(decision: ApprovalDecision, ctx: ToolContext) -> str:
    """One line: what was not run, why, and the exact key or flag that would allow it."""
    if decision.suggested_pattern is None:
        return (
            f"{UNATTENDED_REFUSAL[:-1]}{decision.reason}; no one can approve it here "
            f"({ctx.surface}), and no allow pattern can allow this form (a file redirection, "
            f"a variable assignment or a substitution). {_NO_RETRY}; write files with "
            "write_file, or report what you would need."
        )
    pattern = decision.suggested_pattern
    quoted = "'" + pattern.replace("'", "'\\''") + "'"
    hint = ctx.unattended_hint.replace("{pattern}", quoted) if ctx.unattended_hint else ""
    how = f"{hint} or approvals.unattended_allow" if hint else "approvals.unattended_allow"
    return (
        f"{UNATTENDED_REFUSAL[:-1]}{decision.reason}; no one can approve it here ({ctx.surface}). "
        f"The owner can allow it with {how} (pattern {quoted}). {_NO_RETRY}; "
        "use read-only commands or report what you would need."
    )


def _refusal(decision: ApprovalDecision, surface: str) -> str:
    verdict = decision.verdict
    what = f"{verdict.description} [{verdict.rule}]"
    if decision.source == "deny_glob":
        return f"Refused: the command {decision.reason}. {_NO_RETRY}."
    if decision.source == "hardline":
        return (
            f"Refused: {what}. This command is blocked whatever the configuration. "
            f"{_NO_RETRY}, and do not try to get the same effect another way."
        )
    if decision.source == "timeout":
        return (
            f"The user did not approve this command in time ({what}); that counts as a "
            f"denial and it was not run. {_NO_RETRY}; ask the user or take another approach."
        )
    if decision.source == "unattended":
        return (
            f"Not run: the command needs approval ({what}) and no one can approve it here "
            f"({surface}). {_NO_RETRY}; find a way that needs no dangerous command."
        )
    if decision.source == "judge":
        return f"Not run: {decision.reason}. {_NO_RETRY}."
    if decision.source == "control":
        return (
            f"Refused: {decision.reason} [{verdict.rule}]. {_NO_RETRY}; report back to the "
            "agent that delegated this task instead."
        )
    return (
        f"The user denied this command ({what}); it was not run. "
        f"{_NO_RETRY}; ask the user what to do instead."
    )


def gate_command(
    command: str,
    ctx: ToolContext,
    environment: Environment,
    cwd: str,
    *,
    display: str | None = None,
    allowlist: bool = True,
) -> str:
    """Allow `command` or raise CommandRefused. Returns a note for the model
    (empty unless an "always" approval could not be saved). `display` is what the
    human is shown when the checked command only stands in for the real action
    (a file tool's write is checked as the equivalent shell redirect), and such a
    write passes `allowlist=False`: with nobody there it is judged by the path rules,
    not by the unattended command allowlist (a cron job may write its report)."""
    config = ctx.config or HeraldConfig()
    env = check_env(ctx, environment, cwd)
    verdict = safety.check_command(command, env=env)
    if verdict.is_hardline and verdict.rule == safety.PARSER_LIMITS_RULE:
        raise CommandRefused(_blocked_script_message(command, ctx, environment))
    session_patterns = ctx.own(SessionApprovals).patterns
    policy = safety.ApprovalPolicy(
        config.approvals,
        judge=ctx.judge,
        scenario=ctx.surface,
        session_patterns=session_patterns,
        sandbox=sandbox_scope(environment, ctx.checkpoint),
        delegated=ctx.delegated,
    )
    decision = policy.evaluate(
        command,
        has_human=ctx.approve is not None,
        env=env,
        verdict=verdict,
        unattended_allow=ctx.unattended_allow,
        allowlist=allowlist,
    )
    if decision.outcome == "ask_human" and ctx.approve is not None:
        assert decision.prompt is not None
        prompt = decision.prompt
        if display is not None:
            prompt = dataclasses.replace(prompt, command=redact(display))
        answer = ask_human(ctx.approve, prompt, policy.timeout_seconds, ctx.cancel)
        if answer is None and ctx.cancel.is_set():
            raise CommandRefused("Not run: the turn was interrupted while waiting for approval.")
        decision = policy.record_choice(command, answer, env=env)
    if not decision.allowed:
        if decision.source == "unattended" and decision.blocked is not None:
            raise CommandRefused(unattended_refusal(decision, ctx))
        raise CommandRefused(_refusal(decision, ctx.surface))
    if decision.remember == "always" and decision.pattern:
        failure = persist_always_pattern(decision.pattern, config, ctx.home)
        if failure:
            return f"(approved always, but the pattern was not saved{failure})"
    return ""


__all__ = [
    "UNATTENDED_REFUSAL",
    "CommandRefused",
    "SessionApprovals",
    "ask_human",
    "check_env",
    "gate_command",
    "persist_always_pattern",
    "sandbox_scope",
    "unattended_refusal",
]
