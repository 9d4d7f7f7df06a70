"""Script files: a JSON or YAML list of replies and faults for the fake server."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from herald.testing.fake_llm.script import FAULT_KINDS, Action, FakeUsage, Fault, Reply

_REPLY_KEYS = {
    "text",
    "tool_calls",
    "reasoning",
    "finish_reason",
    "usage",
    "model",
    "chunk_size",
    "chunk_delay",
    "delay",
}

_FAULT_KEYS: dict[str, set[str]] = {
    "status": {"status", "message", "retry_after", "error_type", "code"},
    "context_overflow": {"limit", "tokens"},
    "timeout": {"seconds"},
    "drop_mid_stream": {"after_chunks", "text"},
    "malformed_json": set(),
    "empty_choices": set(),
    "refuse_stream": set(),
    "close_connection": set(),
    "content_policy": {"message"},
}


class ScriptError(ValueError):
    """A script file or item that cannot be turned into replies and faults."""


def load_script(path: str | Path) -> list[Action]:
    """Read a JSON or YAML script file into a list of `Reply`/`Fault` items."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    if path.suffix.lower() == ".json":
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise ScriptError(f"{path}: not valid JSON: {exc}") from exc
    else:
        import yaml  # lazy: only script files need it

        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ScriptError(f"{path}: not valid YAML: {exc}") from exc
    try:
        return parse_script(data)
    except ScriptError as exc:
        raise ScriptError(f"{path}: {exc}") from exc


def parse_script(data: Any) -> list[Action]:
    """Turn already-parsed script data (a list of mappings) into items."""
    if data is None:
        return []
    if not isinstance(data, list):
        raise ScriptError(f"a script is a list of items, got {type(data).__name__}")
    return [_parse_item(item, position) for position, item in enumerate(data, start=1)]


def _parse_item(item: Any, position: int) -> Action:
    if not isinstance(item, Mapping):
        raise ScriptError(f"item {position}: expected a mapping, got {type(item).__name__}")
    try:
        if "fault" in item:
            return _parse_fault(dict(item))
        return _parse_reply(dict(item))
    except ScriptError as exc:
        raise ScriptError(f"item {position}: {exc}") from exc
    except (TypeError, ValueError) as exc:
        raise ScriptError(f"item {position}: {exc}") from exc


def _parse_reply(item: dict[str, Any]) -> Reply:
    unknown = set(item) - _REPLY_KEYS
    if unknown:
        raise ScriptError(
            f"unknown reply keys {sorted(unknown)}; allowed: {sorted(_REPLY_KEYS)} or 'fault'"
        )
    if not ({"text", "tool_calls", "reasoning"} & set(item)):
        raise ScriptError("a reply needs at least one of 'text', 'tool_calls', 'reasoning'")
    usage = item.pop("usage", None)
    if usage is not None:
        if not isinstance(usage, Mapping):
            raise ScriptError("'usage' must be a mapping of FakeUsage fields")
        item["usage"] = FakeUsage(**usage)
    calls = item.get("tool_calls") or []
    if not isinstance(calls, list):
        raise ScriptError("'tool_calls' must be a list of {name, arguments, id} mappings")
    return Reply(**item)


def _parse_fault(item: dict[str, Any]) -> Fault:
    kind = item.pop("fault")
    if kind not in _FAULT_KEYS:
        raise ScriptError(f"unknown fault {kind!r}; expected one of {list(FAULT_KINDS)}")
    unknown = set(item) - _FAULT_KEYS[kind]
    if unknown:
        raise ScriptError(
            f"fault {kind!r} does not take {sorted(unknown)}; it takes {sorted(_FAULT_KEYS[kind])}"
        )
    if kind == "status":
        if "status" not in item:
            raise ScriptError("fault 'status' needs a 'status' code")
        return Fault.status(
            int(item["status"]),
            item.get("message"),
            retry_after=item.get("retry_after"),
            error_type=item.get("error_type"),
            code_str=item.get("code"),
        )
    if kind == "drop_mid_stream":
        text = item.get("text")
        return Fault.drop_mid_stream(
            int(item.get("after_chunks", 3)), Reply.text(text) if text is not None else None
        )
    if kind == "timeout":
        return Fault.timeout(float(item.get("seconds", 30.0)))
    if kind == "context_overflow":
        return Fault.context_overflow(item.get("limit"), item.get("tokens"))
    if kind == "content_policy":
        return Fault.content_policy(item.get("message"))
    return Fault(kind)
