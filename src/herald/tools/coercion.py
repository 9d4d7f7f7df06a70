"""Coerce a tool call's parsed arguments against the tool's JSON schema.

Models often send `"5"` for an integer, `"true"` for a boolean, a JSON-encoded
string for an array, or a bare value where a list is expected. Coercion fixes
those shapes before the handler sees them, and only those:

- numeric / boolean strings become numbers / booleans when the schema asks for one;
- a string holding JSON becomes an array or object when the schema asks for that shape;
- a bare value is wrapped in a list for an array field (then its items are coerced);
- `"null"` becomes None only when the field is nullable;
- unions (`type: [...]`, `anyOf`, `oneOf`) are tried in order; the first that fits wins;
- a string-typed field is never converted (`"1.20"` stays `"1.20"`).

Anything that does not fit is passed through unchanged; the handler reports it.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

_INT_RE = re.compile(r"[+-]?\d+")
_NUMBER_RE = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")

_MISSING = object()


def coerce_arguments(args: dict[str, Any], parameters: dict[str, Any] | None) -> dict[str, Any]:
    """`args` coerced against the tool's `parameters` schema (a new dict; never raises)."""
    if not isinstance(parameters, dict):
        return args
    _fits, value = coerce_value(args, parameters)  # a field that does not fit stays as sent
    return value if isinstance(value, dict) else args


def coerce_value(value: Any, schema: Any) -> tuple[bool, Any]:
    """(does the value fit `schema` after coercion, the coerced value)."""
    if not isinstance(schema, dict) or not schema:
        return True, value
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            return _first_fit(value, options)
    types = schema.get("type")
    if isinstance(types, list):
        return _first_fit(value, [{**schema, "type": t} for t in types])
    if types is None:
        return True, value
    if value == "null" and types != "string" and _nullable(schema):
        return True, None
    if value is None:
        return types == "null" or bool(schema.get("nullable")), None
    return _coerce_typed(value, types, schema)


def _first_fit(value: Any, options: list[Any]) -> tuple[bool, Any]:
    for option in options:
        fits, coerced = coerce_value(value, option)
        if fits:
            return True, coerced
    return False, value


def _nullable(schema: dict[str, Any]) -> bool:
    return bool(schema.get("nullable"))


def _coerce_typed(value: Any, kind: str, schema: dict[str, Any]) -> tuple[bool, Any]:
    if kind == "string":
        return isinstance(value, str), value
    if kind == "null":
        return (value == "null", None) if isinstance(value, str) else (False, value)
    if kind == "boolean":
        return _to_bool(value)
    if kind == "integer":
        return _to_int(value)
    if kind == "number":
        return _to_number(value)
    if kind == "array":
        return _to_array(value, schema)
    if kind == "object":
        return _to_object(value, schema)
    return True, value  # an unknown type name: nothing to check against


def _to_bool(value: Any) -> tuple[bool, Any]:
    if isinstance(value, bool):
        return True, value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return True, value.strip().lower() == "true"
    return False, value


def _to_int(value: Any) -> tuple[bool, Any]:
    if isinstance(value, bool):
        return False, value
    if isinstance(value, int):
        return True, value
    if isinstance(value, float) and value.is_integer():
        return True, int(value)
    if isinstance(value, str) and _INT_RE.fullmatch(value.strip()):
        return True, int(value.strip())
    return False, value


def _to_number(value: Any) -> tuple[bool, Any]:
    if isinstance(value, bool):
        return False, value
    if isinstance(value, int | float):
        return True, value
    if isinstance(value, str) and _NUMBER_RE.fullmatch(value.strip()):
        text = value.strip()
        if _INT_RE.fullmatch(text):
            return True, int(text)
        number = float(text)
        if math.isfinite(number):
            return True, number
    return False, value


def _parse_json(value: str) -> Any:
    text = value.strip()
    if not text or text[0] not in "[{":
        return _MISSING
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return _MISSING


def _to_array(value: Any, schema: dict[str, Any]) -> tuple[bool, Any]:
    if isinstance(value, str):
        parsed = _parse_json(value)
        if isinstance(parsed, list):
            value = parsed
    if isinstance(value, tuple):
        value = list(value)
    if not isinstance(value, list):
        value = [value]  # a bare value where a list is expected
    items = schema.get("items")
    if not isinstance(items, dict):
        return True, value
    out: list[Any] = []
    all_fit = True
    for item in value:
        fits, coerced = coerce_value(item, items)
        all_fit = all_fit and fits
        out.append(coerced)
    return all_fit, out


def _to_object(value: Any, schema: dict[str, Any]) -> tuple[bool, Any]:
    if isinstance(value, str):
        parsed = _parse_json(value)
        if isinstance(parsed, dict):
            value = parsed
    if not isinstance(value, dict):
        return False, value
    properties = schema.get("properties")
    properties = properties if isinstance(properties, dict) else {}
    extra = schema.get("additionalProperties")
    out: dict[str, Any] = {}
    all_fit = True
    for key, item in value.items():
        sub = properties.get(key, extra if isinstance(extra, dict) else None)
        if sub is None:
            out[key] = item
            continue
        fits, coerced = coerce_value(item, sub)
        all_fit = all_fit and fits
        out[key] = coerced
    return all_fit, out
