"""`/rollback` in the REPL, as a person sees it: a turn writes, patches and deletes files
through the real tools (the fake model asks for them), and /rollback puts them back."""

from __future__ import annotations

import time

import pytest

from herald.testing.fake_llm import Reply

pytest.importorskip("pexpect")
pytest.importorskip("pyte")

from screen_support import Screen


@pytest.fixture
def work(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("my notes\n")
    (work / "app.py").write_text("VERSION = 1\n")
    (work / "keep.txt").write_text("do not lose me\n")
    return work


def wait_until(screen: Screen, condition, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"the condition never held; the screen:\n{screen.text}"
        screen.pump(0.1)
    screen.settle()


def snapshot(root) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(root.iterdir()) if p.is_file()}


@pytest.mark.slow
def test_rollback_restores_the_tree_and_a_second_rollback_undoes_it(herald_home, fake_llm, work):
    before = snapshot(work)
    fake_llm.enqueue(
        Reply.tool_call("write_file", {"path": "notes.txt", "content": "overwritten\n"}),
        Reply.tool_call("patch", {"path": "app.py", "old_text": "1", "new_text": "2"}),
        Reply.tool_call("terminal", {"command": "rm keep.txt"}),
        Reply.text("All three changes are done."),
    )
    screen = Screen(work)
    try:
        screen.wait_for("Herald — openai:fake-gpt")
        screen.send("change the files")
        screen.wait_for("All three changes are done.")
        after_turn = snapshot(work)
        assert after_turn["notes.txt"] == b"overwritten\n" and "keep.txt" not in after_turn

        screen.send("/rollback list")
        # The header names the workdir, whose tmp path may wrap the rest of the line.
        screen.wait_for("terminal: rm keep.txt")
        screen.settle()
        assert "Checkpoints of" in screen.text
        assert "write_file" in screen.text

        screen.send("/rollback")
        screen.wait_for("/rollback again undoes it")
        screen.settle()
        # The newest checkpoint was taken before `rm`: the removed file is back, and the
        # write and the patch before it stay.
        assert "Restored the workdir to checkpoint 1" in screen.text
        assert snapshot(work) == {**after_turn, "keep.txt": b"do not lose me\n"}

        screen.send("/rollback")  # undoes that restore
        wait_until(screen, lambda: "keep.txt" not in snapshot(work))
        assert screen.text.count("Restored the workdir to checkpoint 1") == 2
        assert snapshot(work) == after_turn

        screen.send("/rollback 4")  # the checkpoint before the turn's first file change
        screen.wait_for("Restored the workdir to checkpoint 4")
        screen.settle()
        assert snapshot(work) == before
    finally:
        screen.close()
