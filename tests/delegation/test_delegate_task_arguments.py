"""`delegate_task`'s arguments: the schema comes from the signature (the task items from
a model), and bad arguments get clear errors through a registry dispatch before any
sub-agent starts."""

from __future__ import annotations

from typing import Any

import pytest

from herald.delegation.tool import register
from herald.tools import ToolContext, ToolRegistry
from herald.tools.registry import ERROR_PREFIX


@pytest.fixture
def registry() -> ToolRegistry:
    reg = ToolRegistry()
    register(reg)
    return reg


def error(registry: ToolRegistry, **args: Any) -> str:
    result = registry.dispatch("delegate_task", args, ToolContext())
    assert result.is_error and result.content.startswith(ERROR_PREFIX), result.content
    return result.content


def test_schema_comes_from_the_signature(registry: ToolRegistry) -> None:
    spec = registry.get("delegate_task")
    assert spec is not None and spec.toolset == "delegation" and spec.max_result_chars == 60_000
    params = spec.definition()["function"]["parameters"]
    assert "required" not in params  # list/steer/stop need no tasks
    props = params["properties"]
    assert props["mode"]["enum"] == ["fresh", "fork"] and props["mode"]["default"] == "fresh"
    assert props["action"]["enum"] == ["run", "list", "steer", "stop"]
    assert props["action"]["default"] == "run"
    assert props["child_id"] == {
        "description": "for steer and stop: the sub-agent's id",
        "type": "string",
    }
    items = props["tasks"]["items"]
    assert props["tasks"]["type"] == "array" and items["type"] == "object"
    assert items["required"] == ["goal"]
    assert set(items["properties"]) == {"goal", "context", "toolsets", "model"}
    assert items["properties"]["toolsets"] == {
        "description": "toolsets it may use (default: file, terminal, web)",
        "items": {"type": "string"},
        "type": "array",
    }
    # Optional fields stay plain: no nulls, no defaults, no pydantic titles.
    assert items["properties"]["model"] == {
        "description": "another model for this task",
        "type": "string",
    }


def test_bad_arguments_get_clear_errors(registry: ToolRegistry) -> None:
    assert "mode must be one of 'fresh' or 'fork', got 'spoon'" in error(
        registry, mode="spoon", tasks=[{"goal": "x"}]
    )
    assert "action must be one of 'run', 'list', 'steer' or 'stop', got 'pause'" in error(
        registry, action="pause"
    )
    assert "tasks.0.goal is required" in error(registry, tasks=[{"context": "no goal"}])
    assert "tasks.1.goal must be a string, got 7" in error(
        registry, tasks=[{"goal": "a"}, {"goal": 7}]
    )
    assert "'priority' is not a field of tasks.0" in error(
        registry, tasks=[{"goal": "a", "priority": 1}]
    )
    assert "tasks.0: a task must be an object with a goal" in error(registry, tasks=[5])
    # (a bare value is wrapped in a list by the coercion, so the error names the item)
    assert "tasks.0.toolsets.0 must be a string, got a dict" in error(
        registry, tasks=[{"goal": "a", "toolsets": {"file": True}}]
    )
    assert "'budget' is not an argument of delegate_task" in error(registry, budget=3)


def test_action_dependent_arguments_are_checked_in_the_body(registry: ToolRegistry) -> None:
    for tasks in (None, []):
        args = {} if tasks is None else {"tasks": tasks}
        assert "action 'run' needs tasks" in error(registry, **args)
    assert "action 'steer' needs child_id" in error(registry, action="steer", message="hi")
    assert "action 'stop' needs child_id" in error(registry, action="stop")
    # Sub-agent ids are numbers as text; a number is taken as its text.
    assert "no sub-agent '3' in this session" in error(registry, action="stop", child_id=3)


def test_list_needs_no_other_argument(registry: ToolRegistry) -> None:
    result = registry.dispatch("delegate_task", {"action": "list"}, ToolContext(session_id="s"))
    assert not result.is_error and '"sub_agents": []' in result.content
