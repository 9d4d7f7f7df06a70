"""read_file, write_file, patch and search_files are each declared once, on a typed
function: the schema the model sees comes from the signature and docstring, and a bad
argument gets the declared error through `ToolRegistry.dispatch`."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_file_support import call, err, make_ctx, make_registry, ok

from herald.tools import file_tools, search_files
from herald.tools.file_read import MAX_LIMIT

SPECS = {spec.name: spec for spec in (*file_tools.TOOLS, *search_files.TOOLS)}


def parameters(name: str) -> dict:
    return SPECS[name].definition()["function"]["parameters"]


@pytest.fixture
def reg():
    return make_registry()


@pytest.fixture
def ctx(tmp_path: Path):
    (tmp_path / "f.txt").write_text("one\ntwo\nthree\n")
    return make_ctx(tmp_path)


# ------------------------------------------------------------------ schemas


def test_read_file_schema_comes_from_its_signature():
    params = parameters("read_file")
    assert params["required"] == ["path"]
    assert params["properties"]["offset"] == {
        "type": "integer",
        "minimum": 1,
        "description": "first line, 1-based",
    }
    assert params["properties"]["limit"]["minimum"] == 1
    assert SPECS["read_file"].schema["description"].startswith("Read a text file")


def test_write_file_schema_comes_from_its_signature():
    params = parameters("write_file")
    assert params["required"] == ["path", "content"]
    assert params["properties"]["content"]["type"] == "string"
    assert '""' in params["properties"]["content"]["description"]  # how to make an empty file


def test_patch_schema_comes_from_its_signature():
    params = parameters("patch")
    assert params["required"] == ["path"]
    assert params["properties"]["replace_all"] == {
        "type": "boolean",
        "description": "replace every match",
    }
    assert [params["properties"][n]["type"] for n in ("old_text", "new_text", "diff")] == [
        "string"
    ] * 3


def test_search_files_schema_comes_from_its_signature():
    params = parameters("search_files")
    assert params["required"] == ["pattern"]
    assert params["properties"]["mode"]["enum"] == ["content", "files"]
    assert "default" not in params["properties"]["mode"]  # the docstring says it
    assert params["properties"]["glob"]["type"] == "string"  # optional: no null in the schema


# ------------------------------------------------------------------ argument errors


def test_read_file_argument_errors(reg, ctx):
    assert "path is required" in err(call(reg, ctx, "read_file"))
    assert "offset must be at least 1, got 0" in err(
        call(reg, ctx, "read_file", path="f.txt", offset=0)
    )
    assert "offset must be an integer, got a boolean" in err(
        call(reg, ctx, "read_file", path="f.txt", offset=True)
    )
    assert "limit must be an integer, got 'lots'" in err(
        call(reg, ctx, "read_file", path="f.txt", limit="lots")
    )
    assert "'lines' is not an argument of read_file" in err(
        call(reg, ctx, "read_file", path="f.txt", lines=3)
    )


def test_write_file_argument_errors(reg, ctx, tmp_path):
    assert "content is required" in err(call(reg, ctx, "write_file", path="new.txt"))
    assert "content must be a string, got 5" in err(
        call(reg, ctx, "write_file", path="new.txt", content=5)
    )
    assert "'append' is not an argument of write_file" in err(
        call(reg, ctx, "write_file", path="new.txt", content="x", append=True)
    )
    assert not (tmp_path / "new.txt").exists()


def test_patch_argument_errors(reg, ctx, tmp_path):
    assert "replace_all must be true or false, got 'maybe'" in err(
        call(reg, ctx, "patch", path="f.txt", old_text="one", new_text="1", replace_all="maybe")
    )
    assert "old_text must be a string, got 5" in err(
        call(reg, ctx, "patch", path="f.txt", old_text=5, new_text="1")
    )
    assert "path is required" in err(call(reg, ctx, "patch", old_text="one", new_text="1"))
    assert (tmp_path / "f.txt").read_text() == "one\ntwo\nthree\n"


def test_search_files_argument_errors(reg, ctx):
    assert "mode must be one of 'content' or 'files', got 'grep'" in err(
        call(reg, ctx, "search_files", pattern="x", mode="grep")
    )
    assert "glob must be a string, got a list" in err(
        call(reg, ctx, "search_files", pattern="x", glob=["*.py"])
    )
    assert "pattern is required" in err(call(reg, ctx, "search_files", path="."))


# ------------------------------------------------------------------ unchanged behaviour


def test_optional_arguments_sent_as_null_mean_not_given(reg, ctx):
    """Models that fill every field send null for the ones they do not use."""
    assert ok(call(reg, ctx, "read_file", path="f.txt", offset=None, limit=None)).startswith(
        "1: one"
    )
    out = ok(
        call(
            reg,
            ctx,
            "patch",
            path="f.txt",
            old_text="two",
            new_text="2",
            diff=None,
            replace_all=None,
        )
    )
    assert "replaced 1 match at line 2" in out
    out = ok(call(reg, ctx, "search_files", pattern="thr", mode=None, path=None, glob=None))
    assert out == "f.txt:3: three"


def test_read_file_limit_above_the_cap_is_clamped_not_refused(reg, tmp_path):
    (tmp_path / "long.txt").write_text("".join(f"{i}\n" for i in range(MAX_LIMIT + 500)))
    out = ok(call(reg, make_ctx(tmp_path), "read_file", path="long.txt", limit=MAX_LIMIT * 3))
    assert f"lines 1-{MAX_LIMIT} of {MAX_LIMIT + 500}" in out


def test_line_numbers_still_accept_numeric_strings_and_whole_floats(reg, ctx):
    """Strict integers come after coercion, so "2" and 2.0 still work; 2.5 does not."""
    assert ok(call(reg, ctx, "read_file", path="f.txt", offset="2", limit=1.0)).startswith(
        "2: two\n[lines 2-2 of 3"
    )
    assert "offset must be an integer, got 2.5" in err(
        call(reg, ctx, "read_file", path="f.txt", offset=2.5)
    )
