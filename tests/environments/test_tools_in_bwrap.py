"""A whole turn with `terminal.backend: bwrap`, against the fake LLM server: the
terminal and file tools run inside the sandbox with no tool change, and a
machine without bubblewrap gets a refusal the model can relay, never a
command run on the host."""

from __future__ import annotations

from pathlib import Path

import pytest
from environment_support import require_bwrap

from herald.engine import Humans
from herald.testing.fake_llm import Reply

FAKE_KEY = "zq-agent-test-key-8812"
BWRAP = {"terminal": {"backend": "bwrap"}}
# These turns are attended (a person who would refuse anything asked): unattended, only
# known read-only commands run (the unattended allowlist), sandbox or not.
ATTENDED = Humans(approve=lambda prompt: "deny")


@pytest.fixture
def fake_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "user-home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(FAKE_KEY + "\n")
    monkeypatch.setenv("HOME", str(home))
    return home


def _tool_results(fake_llm) -> list[str]:  # type: ignore[no-untyped-def]
    last = fake_llm.model_requests()[-1]
    return [m["content"] for m in last.messages if m["role"] == "tool"]


def test_terminal_and_file_tools_run_inside_the_sandbox(
    make_agent, fake_llm, fake_home: Path, tmp_path: Path
) -> None:
    require_bwrap()
    key = fake_home / ".ssh" / "id_rsa"
    fake_llm.enqueue(
        Reply.tool_call("terminal", {"command": "cat ~/.ssh/id_rsa; echo made > made.txt; pwd"}),
        Reply.tool_call("read_file", {"path": str(key)}),
        Reply.tool_call("write_file", {"path": "notes/plan.md", "content": "step one\n"}),
        Reply.tool_call("read_file", {"path": "notes/plan.md"}),
        Reply.text("Done."),
    )
    agent = make_agent(config=BWRAP)
    result = agent.start_turn("look around", humans=ATTENDED).result(timeout=60)
    assert result.final_text == "Done."
    terminal_out, key_read, _written, read_back = _tool_results(fake_llm)
    work = tmp_path / "work"
    assert FAKE_KEY not in terminal_out and str(work) in terminal_out
    assert "No such file" in terminal_out
    assert FAKE_KEY not in key_read and "does not exist" in key_read
    assert "step one" in read_back
    assert (work / "made.txt").read_text() == "made\n"
    assert (work / "notes" / "plan.md").read_text() == "step one\n"


def test_without_bubblewrap_the_tools_refuse_and_nothing_runs(
    make_agent, fake_llm, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    fake_llm.enqueue(
        Reply.tool_call("terminal", {"command": "echo ran > ran.txt"}),
        Reply.tool_call("write_file", {"path": "written.txt", "content": "x"}),
        Reply.text("The sandbox is missing."),
    )
    agent = make_agent(config=BWRAP)
    agent.start_turn("try it", humans=ATTENDED).result(timeout=60)
    terminal_out, write_out = _tool_results(fake_llm)
    for text in (terminal_out, write_out):
        assert "apt install bubblewrap" in text and "outside the sandbox" in text
    assert not (tmp_path / "work" / "ran.txt").exists()
    assert not (tmp_path / "work" / "written.txt").exists()


def test_patch_search_and_process_run_inside_the_sandbox(
    make_agent, fake_llm, fake_home: Path, tmp_path: Path
) -> None:
    require_bwrap()
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    (work / "app.py").write_text("GREETING = 'hello'\n")
    (work / "secret-link.txt").symlink_to(fake_home / ".ssh" / "id_rsa")
    fake_llm.enqueue(
        Reply.tool_call("patch", {"path": "app.py", "old_text": "hello", "new_text": "howdy"}),
        Reply.tool_call("search_files", {"pattern": "zq-agent|howdy", "path": "."}),
        Reply.tool_call("terminal", {"command": "echo bg-$((6*7))", "background": True}),
        Reply.text("Done."),
    )
    agent = make_agent(config=BWRAP)
    agent.start_turn("edit and search", humans=ATTENDED).result(timeout=60)
    patched, searched, started = _tool_results(fake_llm)
    assert "error" not in patched.lower()
    assert (work / "app.py").read_text() == "GREETING = 'howdy'\n"
    assert "app.py" in searched and FAKE_KEY not in searched  # the link leads nowhere inside
    assert "Started background process" in started
