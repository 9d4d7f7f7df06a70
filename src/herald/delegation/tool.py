"""The `delegate_task` tool: hand bounded pieces of work to sub-agents and get one
structured report per task back; or list, steer and stop the running ones.

Refusals are checked before anything starts: the depth limit (along the stored
lineage), the per-call cap, a paused parent, and the arguments fork mode cannot
honour (another model or toolsets would break the shared prompt cache).
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from herald.delegation.board import board
from herald.delegation.policy import delegation_depth
from herald.delegation.runner import Delegation, TaskSpec
from herald.tools import ToolArgumentError, ToolContext, ToolRegistry, ToolSpec, tool
from herald.tools.consequence import actions

MAX_GOAL_CHARS = 4_000
MAX_CONTEXT_CHARS = 40_000


def _number_as_text(value: Any) -> Any:
    # Sub-agent ids are "1", "2", ...: a model naturally sends them as numbers.
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


ChildId = Annotated[str | None, BeforeValidator(_number_as_text)]


class DelegatedTask(BaseModel):
    # One task for one sub-agent (no docstring: pydantic would send it as a description).
    model_config = ConfigDict(extra="forbid")  # @tool drops the schema noise

    goal: str = Field(description="what the sub-agent must achieve")
    context: str | None = Field(None, description="facts, paths and constraints it needs")
    toolsets: list[str] | None = Field(
        None, description="toolsets it may use (default: file, terminal, web)"
    )
    model: str | None = Field(None, description="another model for this task")

    @model_validator(mode="before")
    @classmethod
    def _bare_goal(cls, value: Any) -> Any:
        # Models sometimes send a task as just its goal.
        if isinstance(value, str):
            return {"goal": value}
        if not isinstance(value, dict):
            raise PydanticCustomError("task", "a task must be an object with a goal")
        return value

    @field_validator("context", mode="before")
    @classmethod
    def _context_text(cls, value: Any) -> Any:
        # Structured context (an object, a list) reaches the sub-agent as JSON text.
        if value is None or isinstance(value, str):
            return value
        return json.dumps(value, ensure_ascii=False)


def parse_tasks(raw: list[DelegatedTask], *, mode: str, cap: int) -> list[TaskSpec]:
    """The checks a schema cannot state: the configured cap, blank goals, sizes, and
    the arguments fork mode cannot honour."""
    if len(raw) > cap:
        raise ToolArgumentError(
            f"{len(raw)} tasks in one call; at most {cap} are allowed "
            "(delegation.max_children_per_call): split the work or merge tasks"
        )
    tasks: list[TaskSpec] = []
    for n, item in enumerate(raw, 1):
        goal, context = item.goal, item.context or ""
        if not goal.strip():
            raise ToolArgumentError(f"task {n} needs a non-empty goal")
        if len(goal) > MAX_GOAL_CHARS or len(context) > MAX_CONTEXT_CHARS:
            raise ToolArgumentError(
                f"task {n} is too long (goal ≤ {MAX_GOAL_CHARS}, context ≤ {MAX_CONTEXT_CHARS} "
                "characters): write the details to a file and name the path"
            )
        model = item.model or None
        if mode == "fork" and (item.toolsets or model):
            raise ToolArgumentError(
                f"task {n}: fork mode keeps the parent's model and tools (the shared prompt "
                "cache depends on them); drop toolsets/model or use mode 'fresh'"
            )
        toolsets = tuple(item.toolsets) if item.toolsets else None
        tasks.append(TaskSpec(goal.strip(), context, toolsets, model))
    return tasks


def _control(ctx: ToolContext, action: str, child_id: str, message: str) -> str:
    if action == "list":
        children = board.children(ctx.session_id)
        return json.dumps(
            {
                "paused": board.paused(ctx.session_id),
                "sub_agents": [
                    {
                        "id": c.id,
                        "goal": c.goal,
                        "status": c.status,
                        "tool_calls": c.tool_calls,
                        "cost_usd": round(c.cost_usd, 6),
                        "session_id": c.session_id,
                    }
                    for c in children
                ],
            },
            ensure_ascii=False,
        )
    if not child_id.strip():
        raise ToolArgumentError(f"action {action!r} needs child_id (see action 'list')")
    child = board.find(ctx.session_id, child_id)
    if child is None:
        raise ToolArgumentError(
            f"no sub-agent {child_id!r} in this session; action 'list' shows them"
        )
    if action == "stop":
        stopped = child.stop()
        return json.dumps({"id": child.id, "stopped": stopped, "status": child.status})
    if not message.strip():
        raise ToolArgumentError("action 'steer' needs a message")
    return json.dumps(
        {"id": child.id, "steered": child.steer(message.strip()), "status": child.status}
    )


@tool(
    toolset="delegation",
    max_result_chars=60_000,
    controls=("tasks", "message"),
    consequential=True,
    consequence=actions("run", "steer"),
)
def delegate_task(
    ctx: ToolContext,
    tasks: list[DelegatedTask] | None = None,
    mode: Literal["fresh", "fork"] = "fresh",
    action: Literal["run", "list", "steer", "stop"] = "run",
    child_id: ChildId = None,
    message: str | None = None,
) -> str:
    """Hand work to sub-agents that run in parallel, each with its own context and
    iteration budget, and get back one report per task (final text, files written,
    tool calls, cost). Give each task a self-contained goal and the context it needs:
    a sub-agent sees nothing of this conversation in mode 'fresh'. Mode 'fork' starts
    each sub-agent from this very conversation (cheaper: the prompt cache is shared).
    action 'list' shows running sub-agents, 'steer' sends one a message, 'stop' stops one.

    Args:
        tasks: the work to hand out, one sub-agent per task
        child_id: for steer and stop: the sub-agent's id
        message: for steer: what to tell it
    """
    if action != "run":
        return _control(ctx, action, child_id or "", message or "")
    if not tasks:
        raise ToolArgumentError(
            "action 'run' needs tasks: a non-empty array of {goal, context} objects"
        )
    if ctx.config is None or ctx.session_id is None or ctx.spawn_agent is None:
        raise ToolArgumentError("delegate_task can only run inside a turn of a Herald session")
    settings = ctx.config.delegation
    depth = delegation_depth(ctx.store, ctx.session_id)
    if depth + 1 > settings.max_depth:
        raise ToolArgumentError(
            f"delegation refused: this agent is at depth {depth} and delegation.max_depth is "
            f"{settings.max_depth}; do the work yourself"
        )
    if board.paused(ctx.session_id):
        raise ToolArgumentError(
            "delegation is paused for this session (/agents resume lifts it); do the work yourself"
        )
    parsed = parse_tasks(tasks, mode=mode, cap=settings.max_children_per_call)
    if mode == "fork" and ctx.parent_request is None:
        raise ToolArgumentError(
            "fork mode needs the parent's request, which this turn lacks; use 'fresh'"
        )
    reports = Delegation(ctx, parsed, mode=mode, settings=settings, depth=depth).run()
    return json.dumps(
        {"mode": mode, "results": [r.to_dict() for r in reports]}, ensure_ascii=False, indent=1
    )


TOOLS: tuple[ToolSpec, ...] = (delegate_task,)


def register(target: ToolRegistry) -> None:
    """Add the tool to `target` (tests build small registries this way)."""
    target.add(*TOOLS)


__all__ = ["TOOLS", "DelegatedTask", "delegate_task", "parse_tasks", "register"]
