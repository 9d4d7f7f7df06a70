"""File-tool writes to sensitive targets need the same approval as a shell write."""

from __future__ import annotations

import pytest
from test_terminal_support import FakeHuman, make_harness

from herald.tools import file_tools


@pytest.fixture
def fake_home(tmp_path, monkeypatch):
    """`~` for the environment: a scratch directory, never the real home."""
    home = tmp_path / "userhome"
    (home / ".ssh").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    return home


def harness(tmp_path, approve=None):
    h = make_harness(tmp_path, {}, approve=approve)
    file_tools.register(h.registry)
    return h


def test_ordinary_files_need_no_approval(tmp_path, fake_home):
    human = FakeHuman([])
    h = harness(tmp_path, human)
    h.ok("write_file", path="notes.txt", content="hello\n")
    h.ok("patch", path="notes.txt", old_text="hello", new_text="bye")
    assert (h.work / "notes.txt").read_text() == "bye\n" and human.prompts == []
    h.close()


def test_sensitive_write_without_a_human_is_refused(tmp_path, fake_home):
    h = harness(tmp_path, approve=None)
    target = fake_home / ".ssh" / "authorized_keys"
    message = h.error("write_file", path=str(target), content="ssh-ed25519 AAAA attacker")
    assert "no one can approve" in message and not target.exists()
    message = h.error("write_file", path=".env", content="TOKEN=x")
    assert "approval" in message and not (h.work / ".env").exists()
    h.close()


def test_the_human_sees_the_file_tool_and_decides(tmp_path, fake_home):
    human = FakeHuman(["deny", "once"])
    h = harness(tmp_path, human)
    (h.work / ".env").write_text("A=1\n")
    denied = h.error("patch", path=".env", old_text="A=1", new_text="A=2")
    assert "denied" in denied and (h.work / ".env").read_text() == "A=1\n"
    assert human.prompts[0].command == f"patch {h.work / '.env'}"
    h.ok("write_file", path=".env", content="A=3\n")
    assert (h.work / ".env").read_text() == "A=3\n"
    h.close()
