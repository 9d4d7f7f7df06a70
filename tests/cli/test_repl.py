"""The interactive REPL driven through a real pseudo-terminal."""

from __future__ import annotations

import os
import sys

import pytest

from herald.state import StateStore
from herald.testing.fake_llm import Reply

pexpect = pytest.importorskip("pexpect")


@pytest.fixture
def workdir(tmp_path):
    path = tmp_path / "work"
    path.mkdir()
    return path


@pytest.fixture
def repl(herald_home, workdir):
    child = pexpect.spawn(
        sys.executable,
        ["-m", "herald"],
        cwd=str(workdir),
        env={**os.environ, "TERM": "dumb", "PROMPT_TOOLKIT_NO_CPR": "1"},
        encoding="utf-8",
        timeout=20,
        dimensions=(40, 200),
    )
    child.expect("Herald — openai:fake-gpt")
    yield child
    if child.isalive():
        child.terminate(force=True)


def test_chat_streams_and_slash_commands_work(repl, fake_llm, herald_home):
    fake_llm.enqueue(Reply.text("Streaming reply from the fake model.", chunk_size=4))
    repl.sendline("hello there")
    repl.expect("Streaming reply from the fake model.")
    repl.sendline("/usage")
    repl.expect("model calls: 1")
    repl.expect("cache hit rate")
    repl.sendline("/model")
    repl.expect("openai:fake-gpt")
    repl.sendline("/bogus")
    repl.expect("unknown command /bogus")
    repl.sendline("/new")
    repl.expect("started a new session")
    fake_llm.enqueue(Reply.text("second session reply"))
    repl.sendline("again")
    repl.expect("second session reply")
    repl.sendline("/exit")
    repl.expect(pexpect.EOF)
    with StateStore(herald_home / "state.db") as store:
        assert len(store.list_sessions()) == 2
    assert (herald_home / "cache" / "cli_history").read_text().count("hello there") == 1


def test_ctrl_c_interrupts_a_turn_then_twice_exits(repl, fake_llm):
    fake_llm.enqueue(Reply.text("z" * 2000, chunk_size=1, chunk_delay=0.01))
    repl.sendline("talk a lot")
    repl.expect("zzzz")
    repl.sendintr()
    repl.expect("interrupted during api call")
    fake_llm.enqueue(Reply.text("still alive"))
    repl.sendline("you there?")
    repl.expect("still alive")
    repl.sendintr()
    repl.expect("press Ctrl-C again to exit")
    repl.sendintr()
    repl.expect(pexpect.EOF)


def test_stop_command_interrupts_the_running_turn(repl, fake_llm):
    fake_llm.enqueue(Reply.text("y" * 2000, chunk_size=1, chunk_delay=0.01))
    repl.sendline("go")
    repl.expect("yyyy")
    repl.sendline("/stop")
    repl.expect("interrupted during api call")
    repl.sendline("/exit")
    repl.expect(pexpect.EOF)


def _tool_results(server):
    return [m["content"] for m in server.model_requests()[-1].messages if m["role"] == "tool"]


@pytest.mark.parametrize(("answer", "kept"), [("d", True), ("o", False)])
def test_dangerous_command_waits_for_approval(repl, fake_llm, workdir, answer, kept):
    victim = workdir / "victim.txt"
    victim.write_text("precious")
    fake_llm.enqueue(
        Reply.tool_call("terminal", {"command": "rm -rf victim.txt"}), Reply.text("all done")
    )
    repl.sendline("clean up")
    repl.expect("│ rm -rf victim.txt")
    repl.expect("answer")
    repl.sendline(answer)
    repl.expect("all done")
    assert victim.exists() is kept
    result = _tool_results(fake_llm)[-1]
    assert ("denied" in result) is kept


def test_compress_command(repl, fake_llm):
    fake_llm.set_handler(
        lambda req: (
            Reply.text("## Goal\nx")
            if req.system and req.system.startswith("You compress")
            else Reply.text("short reply " + "w" * 3000)  # enough for a summary to save
        )
    )
    for i in range(4):
        repl.sendline(f"message {i}")
        repl.expect("short reply")
    repl.sendline("/compress the plan")
    repl.expect("compressed the conversation")
    repl.sendline("/exit")
    repl.expect(pexpect.EOF)
