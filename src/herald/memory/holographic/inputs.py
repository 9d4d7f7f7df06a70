"""Checks on what callers (ultimately the model) hand the fact store: each
failure is a ValueError that says what to send instead."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from herald.memory.holographic.text import clean_text, normalize_entity

MAX_CONTENT_CHARS = 1000


def check_id(fact_id: Any) -> int:
    if isinstance(fact_id, bool) or not isinstance(fact_id, int):
        raise ValueError(f"a fact id is an integer, got {fact_id!r}")
    return fact_id


def check_content(content: Any) -> str:
    if not isinstance(content, str):
        raise ValueError(f"content must be a string, got {type(content).__name__}")
    text = " ".join(clean_text(content).split())
    if not text:
        raise ValueError("content is empty: give the fact as one short statement")
    if len(text) > MAX_CONTENT_CHARS:
        raise ValueError(
            f"content is {len(text)} characters; a fact holds at most {MAX_CONTENT_CHARS}: "
            "split it into several short facts"
        )
    return text


def explicit_entities(entities: Iterable[Any] | None) -> list[str]:
    if entities is None:
        return []
    if isinstance(entities, str):
        entities = [entities]
    out: list[str] = []
    for raw in entities:
        if not isinstance(raw, str):
            raise ValueError(f"entities must be strings, got {raw!r}")
        name = normalize_entity(clean_text(raw))
        if name and name not in out:
            out.append(name)
    return out
