"""Delegation (L5): a service above the engine that runs sub-agents with their own
context and budget. The `delegate_task` tool is composed in by the surfaces that offer
it (herald.toolbox) and spawns children through the engine's `AgentSpawner` port. They
are kept under control (depth, concurrency, approvals through the parent's human,
interrupts that cascade, timeouts that keep partial work, costs that roll up) and may
be forked from the parent's exact request to share its prompt cache."""

from typing import TYPE_CHECKING

# Imported at once: the board instance is named like its module, which a lazy export
# could not shadow once the module is imported.
from herald.delegation.board import Board, ChildRecord, board
from herald.lazy import lazy_exports

if TYPE_CHECKING:  # for type checkers; at run time each name loads on first use
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

_EXPORTS: dict[str, tuple[str, ...]] = {
    "herald.delegation.commands": ("agents_command",),
    "herald.delegation.fork": (
        "FORK_PLACEHOLDER",
        "fork_seed",
    ),
    "herald.delegation.policy": (
        "DELEGATE_SOURCE",
        "DELEGATE_TOOL",
        "MAX_LINEAGE_HOPS",
        "ChildRules",
        "ChildToolGate",
        "delegation_depth",
    ),
    "herald.delegation.report": ("ChildReport",),
    "herald.delegation.runner": (
        "Delegation",
        "TaskSpec",
    ),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

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
