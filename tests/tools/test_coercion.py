"""Argument coercion against a tool's JSON schema."""

from __future__ import annotations

import pytest

from herald.tools import ToolContext, ToolRegistry, coerce_arguments

INT = {"type": "integer"}
NUM = {"type": "number"}
BOOL = {"type": "boolean"}
STR = {"type": "string"}


def schema(**props: dict) -> dict:
    return {"type": "object", "properties": props}


@pytest.mark.parametrize(
    ("field", "sent", "expected"),
    [
        # numeric and boolean strings become their types
        (INT, "5", 5),
        (INT, " -12 ", -12),
        (INT, 3.0, 3),
        (INT, "3.5", "3.5"),  # not an integer: left for the handler to reject
        (NUM, "1.20", 1.2),
        (NUM, "7", 7),
        (NUM, "1e3", 1000.0),
        (NUM, "nan", "nan"),
        (BOOL, "true", True),
        (BOOL, "False", False),
        (BOOL, "yes", "yes"),
        (INT, True, True),  # a boolean is not an integer
        # a string-typed field is never converted
        (STR, "1.20", "1.20"),
        (STR, "true", "true"),
        (STR, "null", "null"),
        (STR, "[1, 2]", "[1, 2]"),
        # "null" becomes None only when the field is nullable
        (INT, "null", "null"),
        ({"type": "integer", "nullable": True}, "null", None),
        ({"type": ["integer", "null"]}, "null", None),
        ({"anyOf": [INT, {"type": "null"}]}, "null", None),
        # JSON strings become arrays / objects when the shape fits
        ({"type": "array", "items": INT}, "[1, 2]", [1, 2]),
        ({"type": "array", "items": INT}, '["1", "2"]', [1, 2]),
        ({"type": "object", "properties": {"a": INT}}, '{"a": "4"}', {"a": 4}),
        ({"type": "object"}, "[1]", "[1]"),  # the shape does not fit
        # a bare value is wrapped for an array field
        ({"type": "array", "items": STR}, "a.txt", ["a.txt"]),
        ({"type": "array", "items": INT}, "5", [5]),
        ({"type": "array", "items": {"type": "object"}}, {"id": "1"}, [{"id": "1"}]),
        # unions are tried in order; the first that fits wins
        ({"type": ["integer", "string"]}, "5", 5),
        ({"type": ["string", "integer"]}, "5", "5"),
        ({"anyOf": [BOOL, INT]}, "7", 7),
        ({"oneOf": [STR, INT]}, "7", "7"),
        ({"anyOf": [INT, BOOL]}, "maybe", "maybe"),
        # no type: anything goes, untouched
        ({}, "5", "5"),
    ],
)
def test_coercion_table(field, sent, expected):
    out = coerce_arguments({"x": sent}, schema(x=field))
    assert out == {"x": expected}
    assert type(out["x"]) is type(expected)


def test_nested_objects_arrays_and_unknown_keys():
    params = schema(
        todos={
            "type": "array",
            "items": {"type": "object", "properties": {"n": INT, "done": BOOL, "label": STR}},
        },
        limit=INT,
    )
    sent = {"todos": '[{"n": "1", "done": "true", "label": "2"}]', "limit": "10", "extra": "3"}
    assert coerce_arguments(sent, params) == {
        "todos": [{"n": 1, "done": True, "label": "2"}],
        "limit": 10,
        "extra": "3",
    }


def test_one_bad_field_does_not_undo_the_others():
    out = coerce_arguments({"a": "x", "b": "2"}, schema(a=INT, b=INT))
    assert out == {"a": "x", "b": 2}


def test_dispatch_coerces_before_the_handler():
    reg = ToolRegistry()
    seen: list[dict] = []
    reg.register(
        "t",
        "test",
        {"description": "t", "parameters": schema(n=INT, version=STR)},
        lambda a, c: seen.append(a) or "ok",
    )
    reg.dispatch("t", '{"n": "3", "version": "1.20"}', ToolContext())
    assert seen == [{"n": 3, "version": "1.20"}]
