"""The LoCoMo bench's merges (bench/locomo.py). The tool's turns and the recalled facts
alternate (each list's first, then each one's second...). Two speakers' fact stores
answer an unscoped question with one search and score, so their facts are merged by it:
alternating them put the other speaker's weak facts between the named one's strong ones."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "locomo.py"


def _bench():
    spec = importlib.util.spec_from_file_location("locomo_bench", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_lists_are_merged_by_rank() -> None:
    merge = _bench()._interleave
    assert list(merge(["a1", "a2", "a3"], ["b1"])) == ["a1", "b1", "a2", "a3"]
    assert list(merge(["t1", "t2"], ["f1", "f2"], ["g1"])) == ["t1", "f1", "g1", "t2", "f2"]
    assert list(merge()) == [] and list(merge([], ["x"])) == ["x"]


def test_two_stores_facts_are_merged_by_score() -> None:
    merge = _bench().merge_by_score
    # store A's three facts, then store B's two, as the bench collects them
    scored = [(0.9, "a1"), (0.8, "a2"), (0.5, "a3"), (0.6, "b1"), (0.5, "b2")]
    assert [turn for _, turn in merge(scored)] == ["a1", "a2", "b1", "a3", "b2"]
    assert merge([]) == []
