"""Delegation (L2): sub-agents with their own context and budget, started by the
`delegate_task` tool, kept under control (depth, concurrency, approvals through the
parent's human, interrupts that cascade, timeouts that keep partial work, costs that
roll up) and optionally forked from the parent's exact request to share its prompt
cache."""

from herald.delegation.board import Board, ChildRecord, board
from herald.delegation.commands import agents_command
from herald.delegation.fork import FORK_PLACEHOLDER, fork_seed
from herald.delegation.policy import (
    DELEGATE_SOURCE,
    DELEGATE_TOOL,
    MAX_LINEAGE_HOPS,
    ChildRules,
    ChildToolGate,
    delegation_depth,
)
from herald.delegation.report import ChildReport
from herald.delegation.runner import Delegation, TaskSpec

__all__ = [
    "DELEGATE_SOURCE",
    "DELEGATE_TOOL",
    "FORK_PLACEHOLDER",
    "MAX_LINEAGE_HOPS",
    "Board",
    "ChildRecord",
    "ChildReport",
    "ChildRules",
    "ChildToolGate",
    "Delegation",
    "TaskSpec",
    "agents_command",
    "board",
    "delegation_depth",
    "fork_seed",
]
