"""The `fact_store` tool: its schema and the dispatcher behind it.

Arguments are checked here; anything wrong raises ValueError with a message
that tells the model what to send instead (the caller sanitises it). Results
are compact JSON strings.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from herald.memory.holographic.records import Contradiction, FactHit
from herald.memory.holographic.store import FactStore

ACTIONS = (
    "add",
    "search",
    "probe",
    "related",
    "reason",
    "contradict",
    "update",
    "remove",
    "feedback",
)
MAX_LIMIT = 50

FACT_STORE_SCHEMA: dict[str, Any] = {
    "name": "fact_store",
    "description": (
        "Long-term facts with trust scores. add: store one short statement; search: find "
        "facts; probe: what a category knows about an entity; related: facts linked to an "
        "entity; reason: facts connecting several entities; contradict: likely conflicting "
        "pairs; update/remove: fix a fact by id; feedback: mark a fact helpful or not."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": list(ACTIONS)},
            "content": {"type": "string", "description": "the fact (add, update)"},
            "category": {"type": "string", "description": "e.g. preferences, people, projects"},
            "entity": {"type": "string", "description": "probe, related, contradict"},
            "entities": {
                "type": "array",
                "items": {"type": "string"},
                "description": "reason; extra entities for add/update",
            },
            "query": {"type": "string", "description": "search"},
            "id": {"type": "integer", "description": "fact id (update, remove, feedback)"},
            "helpful": {"type": "boolean", "description": "feedback"},
            "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT},
        },
        "required": ["action"],
    },
}

_KNOWN = frozenset(FACT_STORE_SCHEMA["parameters"]["properties"])


def _dump(payload: Any) -> str:
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


def _text(args: dict[str, Any], key: str, action: str, *, required: bool = True) -> str | None:
    value = args.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise ValueError(f"fact_store {action} needs '{key}'")
        return None
    if not isinstance(value, str):
        raise ValueError(f"'{key}' must be a string, got {type(value).__name__}")
    return value


def _integer(value: Any, key: str) -> int:
    if isinstance(value, str) and value.strip().lstrip("#").isdigit():
        return int(value.strip().lstrip("#"))
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"'{key}' must be an integer, got {value!r}")
    return value


def _fact_id(args: dict[str, Any], action: str) -> int:
    if args.get("id") is None:
        raise ValueError(f"fact_store {action} needs 'id' (the number shown as #id by search)")
    return _integer(args["id"], "id")


def _entities(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return [item for item in value if item.strip()]
    raise ValueError("'entities' must be a list of strings")


def _boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in {"true", "false", "yes", "no"}:
        return value.strip().lower() in {"true", "yes"}
    raise ValueError("feedback needs 'helpful': true or false")


def _hits(hits: list[FactHit]) -> str:
    return _dump({"count": len(hits), "facts": [hit.brief() for hit in hits]})


def _pairs(pairs: list[Contradiction]) -> str:
    return _dump({"count": len(pairs), "pairs": [pair.brief() for pair in pairs]})


def run_fact_store(store: FactStore, args: Any, *, default_limit: int = 8) -> str:
    """Run one `fact_store` call; returns the JSON result."""
    if not isinstance(args, dict):
        raise ValueError("fact_store takes an object of arguments with an 'action'")
    unknown = sorted(set(args) - _KNOWN)
    if unknown:
        raise ValueError(
            f"fact_store has no argument(s) {', '.join(unknown)}; use: {', '.join(sorted(_KNOWN))}"
        )
    action = args.get("action")
    if action not in ACTIONS:
        raise ValueError(f"fact_store action must be one of {', '.join(ACTIONS)}; got {action!r}")
    limit = default_limit
    if args.get("limit") is not None:
        limit = _integer(args["limit"], "limit")
        if not 1 <= limit <= MAX_LIMIT:
            raise ValueError(f"'limit' must be between 1 and {MAX_LIMIT}")
    handler = _HANDLERS[action]
    return handler(store, args, limit)


def _add(store: FactStore, args: dict[str, Any], limit: int) -> str:
    content = _text(args, "content", "add")
    result = store.add(
        content or "",
        category=_text(args, "category", "add", required=False),
        entities=_entities(args.get("entities")),
    )
    payload: dict[str, Any] = {
        "status": "added" if result.created else "already known (trust raised)",
        **result.fact.brief(),
        "entities": list(result.fact.entities),
    }
    return _dump(payload)


def _search(store: FactStore, args: dict[str, Any], limit: int) -> str:
    query = _text(args, "query", "search", required=False) or _text(
        args, "content", "search", required=False
    )
    if query is None:
        raise ValueError("fact_store search needs 'query': the words to look for")
    category = _text(args, "category", "search", required=False)
    hits = store.search(query or "", limit=limit, category=category)
    store.mark_used([hit.fact.id for hit in hits])
    return _hits(hits)


def _probe(store: FactStore, args: dict[str, Any], limit: int) -> str:
    category = _text(args, "category", "probe") or ""
    entity = _text(args, "entity", "probe") or ""
    return _hits(store.probe(category, entity, limit=limit))


def _related(store: FactStore, args: dict[str, Any], limit: int) -> str:
    return _hits(store.related(_text(args, "entity", "related") or "", limit=limit))


def _reason(store: FactStore, args: dict[str, Any], limit: int) -> str:
    names = _entities(args.get("entities"))
    if not names:
        raise ValueError("fact_store reason needs 'entities': the names to connect")
    return _hits(store.reason(names, limit=limit))


def _contradict(store: FactStore, args: dict[str, Any], limit: int) -> str:
    fact_id = None if args.get("id") is None else _integer(args["id"], "id")
    entity = _text(args, "entity", "contradict", required=False)
    return _pairs(store.contradict(limit=limit, entity=entity, fact_id=fact_id))


def _update(store: FactStore, args: dict[str, Any], limit: int) -> str:
    fact_id = _fact_id(args, "update")
    content = _text(args, "content", "update", required=False)
    category = _text(args, "category", "update", required=False)
    entities = _entities(args.get("entities")) or None
    if content is None and category is None and entities is None:
        raise ValueError("fact_store update needs 'content' and/or 'category' to change")
    fact = store.update(fact_id, content=content, category=category, entities=entities)
    return _dump({"status": "updated", **fact.brief(), "entities": list(fact.entities)})


def _remove(store: FactStore, args: dict[str, Any], limit: int) -> str:
    fact = store.remove(_fact_id(args, "remove"))
    return _dump({"status": "removed", **fact.brief()})


def _feedback(store: FactStore, args: dict[str, Any], limit: int) -> str:
    fact_id = _fact_id(args, "feedback")
    if "helpful" not in args:
        raise ValueError("fact_store feedback needs 'helpful': true or false")
    fact = store.feedback(fact_id, _boolean(args["helpful"]))
    return _dump(
        {
            "status": "feedback recorded",
            **fact.brief(),
            "helpful_count": fact.helpful_count,
            "unhelpful_count": fact.unhelpful_count,
        }
    )


_HANDLERS: dict[str, Callable[[FactStore, dict[str, Any], int], str]] = {
    "add": _add,
    "search": _search,
    "probe": _probe,
    "related": _related,
    "reason": _reason,
    "contradict": _contradict,
    "update": _update,
    "remove": _remove,
    "feedback": _feedback,
}
