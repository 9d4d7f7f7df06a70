"""write_file and patch on files the host runs later (git hooks, .git/config,
.envrc, editor tasks) ask a human on the local backend and are refused when no
one can approve, also through a symlink that hides the target."""

from __future__ import annotations

import os

import pytest
from test_terminal_support import FakeHuman, make_harness

from herald.tools import file_tools

TARGETS = [".git/hooks/post-checkout", ".git/config", ".envrc", ".vscode/tasks.json"]


def harness(tmp_path, approve=None):  # type: ignore[no-untyped-def]
    h = make_harness(tmp_path, {}, approve=approve)
    file_tools.register(h.registry)
    (h.work / ".git" / "hooks").mkdir(parents=True)
    (h.work / ".git" / "config").write_text("[core]\n\tbare = false\n")
    return h


@pytest.mark.parametrize("target", TARGETS)
def test_unattended_write_is_refused(tmp_path, target: str) -> None:
    h = harness(tmp_path, approve=None)
    before = (h.work / ".git" / "config").read_text()
    message = h.error("write_file", path=target, content="#!/bin/sh\ntouch /tmp/pwned\n")
    # Refused by the host-executed rule, or first by the unattended git-metadata rule.
    assert ("no one can approve" in message and "host_executed_write" in message) or (
        "is git metadata" in message and target.startswith(".git/")
    ), message
    assert (h.work / ".git" / "config").read_text() == before
    if target != ".git/config":
        assert not (h.work / target).exists()
    h.close()


@pytest.mark.parametrize("target", TARGETS)
def test_attended_write_asks_and_a_denial_keeps_the_file(tmp_path, target: str) -> None:
    human = FakeHuman(["deny", "once"])
    h = harness(tmp_path, human)
    (h.work / target).parent.mkdir(parents=True, exist_ok=True)
    (h.work / target).write_text("original\n")
    denied = h.error("patch", path=target, old_text="original", new_text="evil")
    assert "denied" in denied and (h.work / target).read_text() == "original\n"
    assert human.prompts[0].rule == "dangerous.host_executed_write"
    assert human.prompts[0].command == f"patch {h.work / target}"
    h.ok("write_file", path=target, content="approved\n")  # the human said once
    assert (h.work / target).read_text() == "approved\n"
    h.close()


def test_a_symlink_in_the_project_does_not_hide_the_hooks_dir(tmp_path) -> None:
    h = harness(tmp_path, approve=None)
    os.symlink(h.work / ".git" / "hooks", h.work / "tools")
    message = h.error("write_file", path="tools/post-checkout", content="#!/bin/sh\n")
    assert "no one can approve" in message or "is git metadata" in message, message
    assert not (h.work / ".git" / "hooks" / "post-checkout").exists()
    h.ok("write_file", path="notes.txt", content="fine\n")  # ordinary files stay free
    h.close()
