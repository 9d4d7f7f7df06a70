"""The `todo` tool: the model's own task list for the current session.

The list lives in per-agent tool state; every call returns the whole list, so
the state after a resume is simply the last successful result in history.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from herald.tools.declare import tool
from herald.tools.registry import ToolArgumentError, ToolContext, ToolRegistry, ToolSpec

STATUSES = ("pending", "in_progress", "completed", "cancelled")


@dataclass
class TodoList:
    """This agent's current list (`ctx.own(TodoList)`)."""

    items: list[dict[str, str]] = field(default_factory=list)


MAX_ITEMS = 100
MAX_CONTENT_CHARS = 500

SCHEMA: dict[str, Any] = {
    "description": (
        "Your task list for multi-step work. Send the whole list, or merge=true to update "
        "items by id. Returns the list."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "todos": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "string"},
                        "content": {"type": "string"},
                        "status": {"type": "string", "enum": list(STATUSES)},
                    },
                    # No "required": with merge=true an update may carry only id + status;
                    # the handler names whatever is missing.
                },
            },
            "merge": {"type": "boolean", "description": "update by id instead of replacing"},
        },
        "required": ["todos"],
    },
}


def _validate_item(raw: Any, index: int, *, partial: bool) -> dict[str, str]:
    if not isinstance(raw, dict):
        raise ToolArgumentError(f"todos[{index}] must be an object with id, content, status")
    item_id = str(raw.get("id", "")).strip()
    if not item_id:
        raise ToolArgumentError(f"todos[{index}] needs a non-empty id")
    item: dict[str, str] = {"id": item_id}
    if "content" in raw or not partial:
        content = str(raw.get("content", "")).strip()
        if not content:
            raise ToolArgumentError(f"todos[{index}] ({item_id}) needs non-empty content")
        item["content"] = content[:MAX_CONTENT_CHARS]
    if "status" in raw or not partial:
        status = str(raw.get("status", "pending"))
        if status not in STATUSES:
            raise ToolArgumentError(
                f"todos[{index}] ({item_id}) has status {status!r}; use one of {', '.join(STATUSES)}"
            )
        item["status"] = status
    return item


def apply_todos(current: list[dict[str, str]], todos: Any, merge: bool) -> list[dict[str, str]]:
    """The list after one call (pure; raises ToolArgumentError on bad input)."""
    if isinstance(todos, dict):
        todos = [todos]
    if not isinstance(todos, list):
        raise ToolArgumentError("todos must be an array of {id, content, status}")
    if not merge:
        items = [_validate_item(raw, i, partial=False) for i, raw in enumerate(todos)]
        ids = [item["id"] for item in items]
        if len(ids) != len(set(ids)):
            raise ToolArgumentError("todo ids must be unique")
        result = items
    else:
        result = [dict(item) for item in current]
        by_id = {item["id"]: item for item in result}
        for i, raw in enumerate(todos):
            update = _validate_item(raw, i, partial=True)
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


def render(items: list[dict[str, str]]) -> str:
    counts = {status: sum(1 for i in items if i["status"] == status) for status in STATUSES}
    return json.dumps({"todos": items, "summary": counts}, ensure_ascii=False)


def handle_todo(args: dict[str, Any], ctx: ToolContext) -> str:
    todo = ctx.own(TodoList)
    items = apply_todos(todo.items, args.get("todos", []), bool(args.get("merge", False)))
    todo.items = items
    return render(items)


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


# Declared once, as values; the composition root (herald.toolbox) adds them.
TOOLS: tuple[ToolSpec, ...] = (
    tool(name="todo", toolset="core", schema=SCHEMA, max_result_chars=20_000, restore=restore_todo)(
        lambda ctx, **args: handle_todo(args, ctx)
    ),
)


def register(target: ToolRegistry) -> None:
    """Add these tools to `target` (tests build small registries this way)."""
    target.add(*TOOLS)
