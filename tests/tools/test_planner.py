"""`plan_tool_batch`: parallel and sequential segments, in the model's order."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from herald.tools import PARALLEL, SEQUENTIAL, ToolRegistry, canonical_path, plan_tool_batch


@dataclass
class Call:
    name: str
    arguments: str
    tag: str = ""


def call(name: str, tag: str = "", **args: object) -> Call:
    return Call(name, json.dumps(args), tag or name)


@pytest.fixture
def lookup():
    reg = ToolRegistry()

    def add(name: str, **kw: Any) -> None:
        paths = [*kw.get("reads", ()), *kw.get("writes", ())]
        schema = {
            "description": name,
            "parameters": {"properties": {p: {"type": "string"} for p in paths}},
        }
        reg.register(name, "test", schema, lambda a, c: name, **kw)

    add("read", parallel_safe=True, reads=("path",))
    add("write", parallel_safe=True, writes=("path",))
    add("copy", parallel_safe=True, reads=("src",), writes=("dst",))
    add("search", parallel_safe=True)  # no path scope: e.g. a web search
    add("shell")  # not parallel-safe
    add("clarify", parallel_safe=True)  # even if marked safe, clarify is a barrier
    return reg.get


def shape(segments) -> list[tuple[str, list[str]]]:
    return [(kind, [c.tag for c in calls]) for kind, calls in segments]


def test_readers_run_in_parallel(lookup, tmp_path):
    calls = [
        call("read", "r1", path="a.txt"),
        call("read", "r2", path="a.txt"),
        call("search", "s"),
    ]
    assert shape(plan_tool_batch(calls, str(tmp_path), lookup)) == [(PARALLEL, ["r1", "r2", "s"])]


def test_writer_overlapping_an_earlier_reservation_splits(lookup, tmp_path):
    calls = [
        call("read", "r1", path="a.txt"),
        call("write", "w1", path="b.txt"),  # no overlap: joins
        call("write", "w2", path="./a.txt"),  # overlaps r1's reservation: new segment
        call("read", "r2", path="c.txt"),
    ]
    assert shape(plan_tool_batch(calls, str(tmp_path), lookup)) == [
        (PARALLEL, ["r1", "w1"]),
        (PARALLEL, ["w2", "r2"]),
    ]


def test_reader_of_a_path_written_earlier_in_the_segment_splits(lookup, tmp_path):
    calls = [call("write", "w", path="a.txt"), call("read", "r", path=str(tmp_path / "a.txt"))]
    assert shape(plan_tool_batch(calls, str(tmp_path), lookup)) == [(SEQUENTIAL, ["w", "r"])]


def test_directory_and_file_inside_it_overlap(lookup, tmp_path):
    calls = [
        call("read", "dir", path="src"),
        call("write", "inner", path="src/pkg/mod.py"),
        call("write", "sibling", path="srcfile.py"),  # same prefix, different path
    ]
    assert shape(plan_tool_batch(calls, str(tmp_path), lookup)) == [
        (SEQUENTIAL, ["dir"]),
        (PARALLEL, ["inner", "sibling"]),
    ]


def test_missing_path_argument_reserves_the_working_directory(lookup, tmp_path):
    calls = [call("read", "r", path="a.txt"), call("write", "w")]  # w: whole cwd
    assert shape(plan_tool_batch(calls, str(tmp_path), lookup)) == [(SEQUENTIAL, ["r", "w"])]


def test_symlinks_resolve_to_the_same_canonical_path(lookup, tmp_path):
    (tmp_path / "real").mkdir()
    os.symlink(tmp_path / "real", tmp_path / "link")
    assert canonical_path("link/x.txt", str(tmp_path)) == str(tmp_path / "real" / "x.txt")
    calls = [call("read", "r", path="real/x.txt"), call("write", "w", path="link/x.txt")]
    assert shape(plan_tool_batch(calls, str(tmp_path), lookup)) == [(SEQUENTIAL, ["r", "w"])]


def test_home_relative_paths_are_expanded(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert canonical_path("~/notes.md", "/elsewhere") == str(Path(tmp_path, "notes.md").resolve())


def test_multi_scope_tools_reserve_every_path(lookup, tmp_path):
    calls = [call("copy", "c", src="a", dst="b"), call("read", "r", path="b")]
    assert shape(plan_tool_batch(calls, str(tmp_path), lookup)) == [(SEQUENTIAL, ["c", "r"])]


def test_clarify_is_a_barrier(lookup, tmp_path):
    calls = [
        call("read", "r1", path="a"),
        call("read", "r2", path="b"),
        call("clarify", "q", question="which?"),
        call("read", "r3", path="c"),
        call("read", "r4", path="d"),
    ]
    assert shape(plan_tool_batch(calls, str(tmp_path), lookup)) == [
        (PARALLEL, ["r1", "r2"]),
        (SEQUENTIAL, ["q"]),
        (PARALLEL, ["r3", "r4"]),
    ]


def test_unparsable_arguments_run_sequentially(lookup, tmp_path):
    calls = [
        call("read", "r1", path="a"),
        Call("read", '{"path": ', "bad"),
        call("read", "r2", path="b"),
    ]
    assert shape(plan_tool_batch(calls, str(tmp_path), lookup)) == [
        (SEQUENTIAL, ["r1", "bad", "r2"])
    ]


def test_non_string_path_and_unsafe_or_unknown_tools_are_sequential(lookup, tmp_path):
    calls = [
        call("read", "r1", path="a"),
        call("read", "r2", path="b"),
        call("read", "odd", path=["x"]),
        call("shell", "sh"),
        call("nope", "unknown"),
        call("search", "s1"),
        call("search", "s2"),
    ]
    assert shape(plan_tool_batch(calls, str(tmp_path), lookup)) == [
        (PARALLEL, ["r1", "r2"]),
        (SEQUENTIAL, ["odd", "sh", "unknown"]),
        (PARALLEL, ["s1", "s2"]),
    ]


def test_a_segment_of_one_is_sequential(lookup, tmp_path):
    assert shape(plan_tool_batch([call("read", "r", path="a")], str(tmp_path), lookup)) == [
        (SEQUENTIAL, ["r"])
    ]
    assert plan_tool_batch([], str(tmp_path), lookup) == []


def test_order_is_always_the_models(lookup, tmp_path):
    names = ["read", "shell", "write", "search", "clarify", "read", "write", "copy"]
    calls = [call(n, f"{n}{i}", path=f"p{i % 3}", src="p1", dst="p9") for i, n in enumerate(names)]
    segments = plan_tool_batch(calls, str(tmp_path), lookup)
    assert [c.tag for _, members in segments for c in members] == [c.tag for c in calls]
    assert all(len(members) > 1 for kind, members in segments if kind == PARALLEL)
