"""Safety (L0): command approval, secret redaction and injection scanning.

`check_command` decides, deterministically and without I/O, whether a shell
command may run: ``hardline`` (refused whatever the configuration: deleting
/, a system directory or a home, mkfs, raw disk writes, fork bombs, killing
every process, power-off, commands over the parser limits, ``sudo -S``
without a configured password), ``approval`` (dangerous: recursive or forced
deletes, destructive git, downloads piped into a shell, inline interpreter
code, writes to sensitive files, destructive SQL, stopping services or
Herald's gateway, prunes …) or ``allow``; `RULE_CATALOGUE` lists every rule
id. `save_blocked_script` stores a command refused for its size as a
script. The approval policy (`decide`, `ApprovalPolicy`, `resolve_choice`,
the smart-mode judge prompt and answer parsing, allow patterns and deny
globs) turns a verdict into allow / deny / ask-a-human; inside a real
sandbox with ``approvals.sandboxed: relaxed`` (`SandboxScope`,
`sandbox_relaxation`) commands that only endanger the sandbox skip the prompt. `redact` masks
secrets in text shown to people, logged or summarised (plus exact values
registered with `register_secret_values`), and `scan_text` is the one
injection scanner for memory, context files, cron prompts, skills and
webhooks.
"""

from herald.safety.approval import (
    HUMAN_CHOICES,
    ApprovalDecision,
    ApprovalPolicy,
    ApprovalPrompt,
    Judge,
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
from herald.safety.redaction import clear_secret_values, redact, register_secret_values
from herald.safety.sandbox_policy import SandboxScope, sandbox_relaxation
from herald.safety.scanner import SCAN_KINDS, ScanFinding, ScanResult, scan_text

__all__ = [
    "HUMAN_CHOICES",
    "PARSER_LIMITS_RULE",
    "RULE_CATALOGUE",
    "SCAN_KINDS",
    "ApprovalDecision",
    "ApprovalPolicy",
    "ApprovalPrompt",
    "CommandAnalysis",
    "CommandVerdict",
    "Judge",
    "SandboxScope",
    "ScanFinding",
    "ScanResult",
    "analyze_command",
    "build_judge_prompt",
    "build_prompt",
    "check_command",
    "clear_secret_values",
    "decide",
    "deny_glob_match",
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
    "unattended_default",
]
