"""What a sub-agent may do: how deep it sits, which tools it never gets, and the gate that
refuses those tools when they are called anyway.

A child never gets `clarify` (nobody answers it), `cronjob`, memory writes or
messaging, and gets `delegate_task` only below the depth limit. Fresh children do
not see those tools at all; fork children keep the parent's exact tool list (the
provider's prompt cache depends on it), so the gate refuses them at call time —
for every child, as a second line behind the tool list.

Depth is counted along the stored lineage (``parent_id``): a session started by
delegation has source ``delegate``. The walk stops after `MAX_LINEAGE_HOPS` and
remembers the sessions it saw, so a cycle in stored data cannot hang it; a walk
that does not end in time counts as too deep.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from herald.tools import (
    Offered,
    ToolContext,
    ToolOverlay,
    ToolRegistry,
    ToolResult,
    ToolSpec,
    sanitize_error,
)

DELEGATE_SOURCE = "delegate"
DELEGATE_TOOL = "delegate_task"
MAX_LINEAGE_HOPS = 8

# Tools no sub-agent may call, with the reason the model reads.
NEVER_FOR_CHILDREN: dict[str, str] = {
    "clarify": "a sub-agent cannot ask the user questions; decide, and state the assumption "
    "in your final answer",
    "cronjob": "a sub-agent cannot schedule jobs; say in your final answer what should be "
    "scheduled",
    "memory": "a sub-agent cannot write memory; put what is worth remembering in your final answer",
    "send_message": "a sub-agent cannot send messages; put the message in your final answer",
}
# Whole toolsets no sub-agent may call (messaging tools register under this name).
NEVER_TOOLSETS = frozenset({"messaging", "cronjob"})


def delegation_depth(store: Any, session_id: str | None) -> int:
    """How many delegations deep `session_id` is (0: a session a person or job started).
    A lineage longer than `MAX_LINEAGE_HOPS`, or one that loops, counts as
    `MAX_LINEAGE_HOPS + 1` so every limit refuses it."""
    seen: set[str] = set()
    current = session_id
    for depth in range(MAX_LINEAGE_HOPS + 1):
        if current is None:
            return depth
        if current in seen:
            break
        seen.add(current)
        record = store.get_session(current) if store is not None else None
        if record is None or record.source != DELEGATE_SOURCE:
            return depth
        current = record.parent_id
    return MAX_LINEAGE_HOPS + 1


@dataclass(frozen=True)
class ChildRules:
    """The refusals of one child: tool name → the reason the model reads."""

    refused: Mapping[str, str]

    @classmethod
    def for_child(cls, *, depth: int, max_depth: int, fork: bool) -> ChildRules:
        refused = dict(NEVER_FOR_CHILDREN)
        if fork:
            refused[DELEGATE_TOOL] = (
                "a fork-mode sub-agent cannot delegate again; do the work yourself"
            )
        elif depth >= max_depth:
            refused[DELEGATE_TOOL] = (
                f"sub-agents at depth {depth} cannot delegate (delegation.max_depth is "
                f"{max_depth}); do the work yourself"
            )
        return cls(refused)

    def refusal(self, name: str, registry: ToolRegistry) -> str | None:
        """Why this child may not call `name`, or None."""
        if name in self.refused:
            return self.refused[name]
        spec = registry.get(name)
        return self.refusal_of(spec) if spec is not None else None

    def refusal_of(self, spec: ToolSpec) -> str | None:
        return self.refusal_by(spec.name, spec.toolset)

    def refusal_by(self, name: str, toolset: str) -> str | None:
        if name in self.refused:
            return self.refused[name]
        if toolset in NEVER_TOOLSETS:
            return f"a sub-agent cannot use the {toolset} tools"
        return None


class ChildToolGate(ToolOverlay):
    """The parent's tools as one child sees them: refused tools answer with an error result
    whatever the tool list said, everything else runs as it would for the parent."""

    def __init__(
        self,
        base: ToolRegistry,
        rules: ChildRules,
        *,
        visible: list[str] | tuple[str, ...] | None = None,
    ):
        super().__init__(base)
        self.rules = rules
        # A fresh child's registry holds only what it may use (so no bundle or toolset can
        # offer it more): the parent's tools minus the refused ones. None: everything is
        # listed (a fork child keeps the parent's exact tool list).
        self.visible = None if visible is None else frozenset(visible)

    def _listed(self, name: str, toolset: str) -> bool:
        if self.visible is None:
            return True
        return name in self.visible and self.rules.refusal_by(name, toolset) is None

    def get(self, name: str) -> ToolSpec | None:
        spec = super().get(name)
        return spec if spec is not None and self._listed(name, spec.toolset) else None

    def offer(self, name: str) -> Offered | None:
        offer = super().offer(name)
        return offer if offer is not None and self._listed(name, offer.toolset) else None

    def _toolset_of(self) -> dict[str, str]:
        return {n: t for n, t in super()._toolset_of().items() if self._listed(n, t)}

    def _specs(self) -> dict[str, ToolSpec]:
        return {n: s for n, s in super()._specs().items() if self._listed(n, s.toolset)}

    def dispatch(
        self,
        name: str,
        raw_arguments: str | dict[str, Any] | None,
        ctx: ToolContext,
        *,
        run_hooks: bool = True,
    ) -> ToolResult:
        reason = self.rules.refusal(name, self.base)
        if reason is not None:
            return ToolResult(sanitize_error(f"{name} refused: {reason}"), True)
        return super().dispatch(name, raw_arguments, ctx, run_hooks=run_hooks)


__all__ = [
    "DELEGATE_SOURCE",
    "DELEGATE_TOOL",
    "MAX_LINEAGE_HOPS",
    "NEVER_FOR_CHILDREN",
    "ChildRules",
    "ChildToolGate",
    "delegation_depth",
]
