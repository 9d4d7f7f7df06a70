"""Entity names in a fact or a query (herald.memory.holographic.text.extract_entities):
what is found, and that long text is read once. The recall prefetch runs it on every
message its owner sends, so a pasted log or a divider line must not hold the turn."""

from __future__ import annotations

import pytest

from herald.memory.holographic.text import extract_entities


def test_names_paths_handles_and_code_names_are_found() -> None:
    text = (
        "Alice moved deploy.sh to /srv/app/bin/ and pinged @ops_team about "
        "the retry_budget setting and _private_helper in config.yaml"
    )
    found = extract_entities(text)
    for name in ("alice", "deploy.sh", "/srv/app/bin/", "@ops_team", "retry_budget"):
        assert name in found, (name, found)
    assert "_private_helper" in found and "config.yaml" in found


@pytest.mark.parametrize("seed", ["-", "a-b", "a", "a_b-", "@ab ", "a.", "_a", "x/y-", "-a_"])
def test_long_runs_are_read_in_one_pass(seed: str) -> None:
    # 200,000 characters: the patterns this replaced read a run again from each of its
    # characters (20,000 dashes took 8 s), which here would be over ten minutes.
    text = (seed * 200_000)[:200_000]
    found = extract_entities(f"Alice wrote {text} to Bob")
    assert "alice" in found and "bob" in found
