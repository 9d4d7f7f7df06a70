"""Safety (L0): command approval, secret redaction and injection scanning.

`check_command` decides, deterministically and without I/O, whether a shell
command may run: ``hardline`` (refused whatever the configuration: deleting
/, a system directory or a home, mkfs, raw disk writes, fork bombs, killing
every process, power-off, commands over the parser limits), ``approval``
(dangerous: recursive or forced deletes, destructive git, downloaded or
decoded code run by a shell, inline interpreter code, writes to sensitive
files, destructive SQL, stopping or restarting services or Herald's gateway,
container and cluster deletes, firewall flushes, world-writable chmod,
``sudo -S``, command names from unknown expansions …) or ``allow``. Every
position that runs its argument (``bash -c``, ``man -P``, ``git -c
core.pager=``, ``find -exec``, ``xargs``, ``env -S``, ``GIT_PAGER=`` …) is a
carrier whose payload gets the full rules; `RULE_CATALOGUE` lists every rule
id. `save_blocked_script` stores a command refused for its size as a
script. The approval policy (`decide`, `ApprovalPolicy`, `resolve_choice`,
the smart-mode judge prompt and answer parsing, allow patterns and deny
globs) turns a verdict into allow / deny / ask-a-human; inside a real
sandbox with ``approvals.sandboxed: relaxed`` (`SandboxScope`,
`sandbox_relaxation`) commands that only endanger the sandbox's own /tmp and
home, or project files a checkpoint covers (`SandboxScope.checkpointed`), skip
the prompt; git history and files the host runs later
(`HOST_EXECUTED_PATHS`) always ask. `redact` masks
secrets in text shown to people, logged or summarised (plus exact values
registered with `register_secret_values`), and `scan_text` is the one
injection scanner for memory, context files, cron prompts, skills and
webhooks. `strip_structure_tags` removes role tags, tool-call markup and
chat-template tokens from untrusted text (tool errors) before a model reads
it. Herald's control plane (its config, secrets, tokens, pairing, plugins, code and
admin commands; DESIGN.md invariant 16) is defined once in herald.safety.control_plane:
its ``control.*`` rules make posture changes, control-file writes and secret reads
hard-line and admin commands owner-only (`classify_path`, `secret_read_refusal`
for the file tools).
it. `RequestGuard` (with a `BodyRule` per route) is the one request-shape guard every
served HTTP app sits behind: body size by Content-Length before reading and while
streaming, JSON depth before parsing.
"""

from typing import TYPE_CHECKING

from herald.lazy import lazy_exports

if TYPE_CHECKING:  # for type checkers; at run time each name loads on first use
    from herald.safety.approval import (
        HUMAN_CHOICES,
        ApprovalDecision,
        ApprovalPolicy,
        ApprovalPrompt,
        Judge,
        JudgeSkipped,
        build_judge_prompt,
        build_prompt,
        decide,
        deny_glob_match,
        make_allow_pattern,
        parse_judge_answer,
        pattern_matches,
        resolve_choice,
        run_judge,
        unattended_default,
    )
    from herald.safety.command_rules import RULE_CATALOGUE
    from herald.safety.commands import (
        PARSER_LIMITS_RULE,
        CommandAnalysis,
        CommandVerdict,
        analyze_command,
        check_command,
        save_blocked_script,
    )
    from herald.safety.control_plane import (
        CONTROL_RULES,
        classify_path,
        is_posture_key,
        secret_read_refusal,
    )
    from herald.safety.host_executed import HOST_EXECUTED_PATHS, HostExecuted, host_executed_target
    from herald.safety.http_guard import BodyRule, RequestGuard
    from herald.safety.read_only import (
        READ_ONLY_COMMANDS,
        ReadOnlyCheck,
        SegmentCheck,
        check_read_only,
        is_read_only,
    )
    from herald.safety.redaction import clear_secret_values, redact, register_secret_values
    from herald.safety.sandbox_policy import SandboxScope, sandbox_relaxation
    from herald.safety.scanner import SCAN_KINDS, SCAN_RULES, ScanFinding, ScanResult, scan_text
    from herald.safety.structure_tags import strip_structure_tags

_EXPORTS: dict[str, tuple[str, ...]] = {
    "herald.safety.approval": (
        "HUMAN_CHOICES",
        "ApprovalDecision",
        "ApprovalPolicy",
        "ApprovalPrompt",
        "Judge",
        "JudgeSkipped",
        "build_judge_prompt",
        "build_prompt",
        "decide",
        "deny_glob_match",
        "make_allow_pattern",
        "parse_judge_answer",
        "pattern_matches",
        "resolve_choice",
        "run_judge",
        "unattended_default",
    ),
    "herald.safety.command_rules": ("RULE_CATALOGUE",),
    "herald.safety.commands": (
        "PARSER_LIMITS_RULE",
        "CommandAnalysis",
        "CommandVerdict",
        "analyze_command",
        "check_command",
        "save_blocked_script",
    ),
    "herald.safety.control_plane": (
        "CONTROL_RULES",
        "classify_path",
        "is_posture_key",
        "secret_read_refusal",
    ),
    "herald.safety.host_executed": (
        "HOST_EXECUTED_PATHS",
        "HostExecuted",
        "host_executed_target",
    ),
    "herald.safety.http_guard": (
        "BodyRule",
        "RequestGuard",
    ),
    "herald.safety.read_only": (
        "READ_ONLY_COMMANDS",
        "ReadOnlyCheck",
        "SegmentCheck",
        "check_read_only",
        "is_read_only",
    ),
    "herald.safety.redaction": (
        "clear_secret_values",
        "redact",
        "register_secret_values",
    ),
    "herald.safety.sandbox_policy": (
        "SandboxScope",
        "sandbox_relaxation",
    ),
    "herald.safety.scanner": (
        "SCAN_KINDS",
        "SCAN_RULES",
        "ScanFinding",
        "ScanResult",
        "scan_text",
    ),
    "herald.safety.structure_tags": ("strip_structure_tags",),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "CONTROL_RULES",
    "HOST_EXECUTED_PATHS",
    "HUMAN_CHOICES",
    "PARSER_LIMITS_RULE",
    "READ_ONLY_COMMANDS",
    "RULE_CATALOGUE",
    "SCAN_KINDS",
    "SCAN_RULES",
    "ApprovalDecision",
    "ApprovalPolicy",
    "ApprovalPrompt",
    "BodyRule",
    "CommandAnalysis",
    "CommandVerdict",
    "HostExecuted",
    "Judge",
    "JudgeSkipped",
    "ReadOnlyCheck",
    "RequestGuard",
    "SandboxScope",
    "ScanFinding",
    "ScanResult",
    "SegmentCheck",
    "analyze_command",
    "build_judge_prompt",
    "build_prompt",
    "check_command",
    "check_read_only",
    "classify_path",
    "clear_secret_values",
    "decide",
    "deny_glob_match",
    "host_executed_target",
    "is_posture_key",
    "is_read_only",
    "make_allow_pattern",
    "parse_judge_answer",
    "pattern_matches",
    "redact",
    "register_secret_values",
    "resolve_choice",
    "run_judge",
    "sandbox_relaxation",
    "save_blocked_script",
    "scan_text",
    "secret_read_refusal",
    "strip_structure_tags",
    "unattended_default",
]
