"""The `todo` tool: the model's own task list for the current session.

The list lives in per-agent tool state; every call returns the whole list, so
the state after a resume is simply the last successful result in history.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal, Required, get_args

from pydantic import ConfigDict, with_config
from typing_extensions import TypedDict  # pydantic reads typing's only from Python 3.12

from herald.tools.declare import tool
from herald.tools.registry import ToolArgumentError, ToolContext, ToolRegistry, ToolSpec

Status = Literal["pending", "in_progress", "completed", "cancelled"]
STATUSES: tuple[Status, ...] = get_args(Status)

MAX_ITEMS = 100
MAX_CONTENT_CHARS = 500


# One entry of the list. Only the id is required: with merge=true an update may carry
# just id + status (the tool names whatever a new item is missing). Models often send
# numeric ids, which are kept as text; keys the list does not know are ignored.
# (A comment, not a docstring: a docstring would be sent to the model with the schema.)
@with_config(ConfigDict(coerce_numbers_to_str=True))
class TodoItem(TypedDict, total=False):
    id: Required[str]
    content: str
    status: Status


@dataclass
class TodoList:
    """This agent's current list (`ctx.own(TodoList)`)."""

    items: list[TodoItem] = field(default_factory=list)


def _checked(raw: TodoItem, index: int, *, partial: bool) -> TodoItem:
    """`raw` with its text stripped, or a ToolArgumentError naming the item."""
    item_id = raw["id"].strip()
    if not item_id:
        raise ToolArgumentError(f"todos[{index}] needs a non-empty id")
    item: TodoItem = {"id": item_id}
    if "content" in raw or not partial:
        content = raw.get("content", "").strip()
        if not content:
            raise ToolArgumentError(f"todos[{index}] ({item_id}) needs non-empty content")
        item["content"] = content[:MAX_CONTENT_CHARS]
    if "status" in raw or not partial:
        item["status"] = raw.get("status", "pending")
    return item


def apply_todos(current: list[TodoItem], todos: list[TodoItem], merge: bool) -> list[TodoItem]:
    """The list after one call (pure; raises ToolArgumentError on bad input). The items'
    shape (an id, a known status) is checked by the tool's signature before this runs."""
    if not merge:
        result = [_checked(raw, i, partial=False) for i, raw in enumerate(todos)]
        ids = [item["id"] for item in result]
        if len(ids) != len(set(ids)):
            raise ToolArgumentError("todo ids must be unique")
    else:
        result = [TodoItem(**item) for item in current]
        by_id = {item["id"]: item for item in result}
        for i, raw in enumerate(todos):
            update = _checked(raw, i, partial=True)
            existing = by_id.get(update["id"])
            if existing is not None:
                existing.update(update)
                continue
            if "content" not in update:
                raise ToolArgumentError(f"todos[{i}] ({update['id']}) is new, so it needs content")
            update.setdefault("status", "pending")
            result.append(update)
            by_id[update["id"]] = update
    if len(result) > MAX_ITEMS:
        raise ToolArgumentError(f"a todo list holds at most {MAX_ITEMS} items")
    return result


def render(items: list[TodoItem]) -> str:
    counts = {status: sum(1 for i in items if i["status"] == status) for status in STATUSES}
    return json.dumps({"todos": items, "summary": counts}, ensure_ascii=False)


def restore_todo(messages: list[dict[str, Any]], ctx: ToolContext) -> None:
    """The last successful `todo` result in the transcript is the current list."""
    names = {}
    for msg in messages:
        for call in msg.get("tool_calls") or []:
            names[call.get("id")] = (call.get("function") or {}).get("name")
    for msg in reversed(messages):
        if msg.get("role") != "tool" or names.get(msg.get("tool_call_id")) != "todo":
            continue
        try:
            data = json.loads(msg.get("content") or "")
        except (TypeError, json.JSONDecodeError):
            continue
        if isinstance(data, dict) and isinstance(data.get("todos"), list):
            ctx.own(TodoList).items = data["todos"]
            return


@tool(toolset="core", max_result_chars=20_000, restore=restore_todo)
def todo(ctx: ToolContext, todos: list[TodoItem], merge: bool = False) -> str:
    """Your task list for multi-step work. Send the whole list, or merge=true to update
    items by id. Returns the list.

    Args:
        merge: update by id instead of replacing
    """
    state = ctx.own(TodoList)
    state.items = apply_todos(state.items, todos, merge)
    return render(state.items)


# Declared once, as values; the composition root (herald.toolbox) adds them.
TOOLS: tuple[ToolSpec, ...] = (todo,)


def register(target: ToolRegistry) -> None:
    """Add these tools to `target` (tests build small registries this way)."""
    target.add(*TOOLS)
