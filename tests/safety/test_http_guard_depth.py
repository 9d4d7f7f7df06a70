"""`json_too_deep`, the nesting check the request guard runs before any JSON parser
(a deep document makes `json.loads` recurse until RecursionError)."""

from __future__ import annotations

import json

import pytest

from herald.safety.http_guard import describe_bytes, json_too_deep


def nested(depth: int) -> bytes:
    return (
        json.dumps(json.loads("[" * depth + "]" * depth)).encode()
        if depth < 900
        else (b"[" * depth + b"]" * depth)
    )


@pytest.mark.parametrize("depth", [1, 2, 16, 63, 64])
def test_documents_up_to_the_limit_pass(depth: int) -> None:
    assert not json_too_deep(nested(depth), 64)


@pytest.mark.parametrize("depth", [65, 100, 5000])
def test_deeper_documents_are_caught(depth: int) -> None:
    assert json_too_deep(nested(depth), 64)


def test_mixed_objects_and_arrays_count_together() -> None:
    doc = b'{"a": [{"b": [{"c": [1]}]}]}'  # depth 6
    assert not json_too_deep(doc, 6) and json_too_deep(doc, 5)


def test_brackets_inside_strings_do_not_count() -> None:
    doc = json.dumps({"text": "[" * 500 + '\\"]{' * 100}).encode()
    assert not json_too_deep(doc, 2)


def test_unbalanced_bracket_soup_is_left_to_the_parser() -> None:
    assert not json_too_deep(b"[" * 10, 64)  # the parser refuses it as invalid JSON
    assert not json_too_deep(b"", 64)


def test_limits_are_named_in_readable_units() -> None:
    assert describe_bytes(4 * 1024 * 1024) == "4 MiB"
    assert describe_bytes(4096) == "4 KiB"
    assert describe_bytes(1000) == "1000 bytes"
