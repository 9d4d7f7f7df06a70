"""An argument called `title` is an argument, not pydantic's schema title: it must reach
the model's schema (kanban_create's `title` was missing from it)."""

from __future__ import annotations

from herald.kanban.tools import kanban_create
from herald.tools import ToolContext, tool


def test_an_argument_named_title_stays_in_the_schema() -> None:
    @tool(toolset="t")
    def note(ctx: ToolContext, title: str, body: str = "") -> str:
        """Write a note.

        Args:
            title: the heading
        """
        return title

    properties = note.schema["parameters"]["properties"]
    assert properties["title"] == {"description": "the heading", "type": "string"}
    assert "title" not in properties["body"]  # pydantic's own titles are still dropped


def test_kanban_create_offers_its_title() -> None:
    assert "title" in kanban_create.schema["parameters"]["properties"]
