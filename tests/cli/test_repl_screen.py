"""What the REPL leaves on the screen, rendered by a terminal emulator."""

from __future__ import annotations

import re

import pytest

from herald.testing.fake_llm import Fault, Reply

pytest.importorskip("pexpect")
pytest.importorskip("pyte")

from screen_support import COLS, Screen


@pytest.fixture
def screen(herald_home, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    shown = Screen(work)
    shown.wait_for("Herald — openai:fake-gpt")
    yield shown
    shown.close()


def _reply_block(screen: Screen, after: str) -> list[str]:
    """The screen lines between the line showing ``after`` (the typed input) and the
    next prompt."""
    lines = screen.lines
    start = max(i for i, line in enumerate(lines) if after in line)
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("›"))
    return lines[start + 1 : end]


def _ask(screen: Screen, text: str, last_words: str) -> list[str]:
    screen.send(text)
    screen.wait_for(last_words)
    screen.settle()
    return _reply_block(screen, text)


def test_a_streamed_one_line_reply_stays_on_screen(screen, fake_llm):
    fake_llm.enqueue(Reply.text("Hello! This is a one-line reply.", chunk_size=4))
    assert _ask(screen, "hello", "one-line reply.") == ["Hello! This is a one-line reply."]


def test_a_multi_line_reply_keeps_its_last_line(screen, fake_llm):
    fake_llm.enqueue(Reply.text("line one\nline two\nline three", chunk_size=3))
    assert _ask(screen, "lines please", "line three") == ["line one", "line two", "line three"]


def test_a_long_streamed_reply_is_shown_whole(screen, fake_llm):
    words = " ".join(f"word{i:03d}" for i in range(120))  # ~960 chars: wraps over lines
    fake_llm.enqueue(Reply.text(words, chunk_size=5))
    block = _ask(screen, "talk", "word119")
    assert " ".join(" ".join(block).split()) == words
    assert all(len(line) <= COLS for line in block)


def test_the_reply_after_a_tool_call_is_shown(screen, fake_llm):
    fake_llm.enqueue(
        Reply.tool_call("terminal", {"command": "echo hi"}),
        Reply.text("The command printed hi.\nAll good.", chunk_size=2),
    )
    block = _ask(screen, "run it", "All good.")
    assert block[-2:] == ["The command printed hi.", "All good."]
    assert any("running terminal" in line for line in block)


def test_the_approval_prompt_shows_every_choice_and_the_command(screen, fake_llm, tmp_path):
    fake_llm.enqueue(
        Reply.tool_call("terminal", {"command": "rm -rf build/[abc] && echo '[red]x[/red]'"}),
        Reply.text("ok"),
    )
    screen.send("clean")
    screen.wait_for("answer")
    screen.settle()
    lines = screen.lines
    choices = next(line for line in lines if line.startswith("Allow? ")).removeprefix("Allow? ")
    hint = " / ".join(f"[{c[0]}]{c[1:]}" for c in choices.split(" / "))
    assert f"  answer {hint}" in lines
    assert "│ rm -rf build/[abc] && echo '[red]x[/red]'" in screen.text
    flagged = next(line for line in lines if "Flagged: " in line)
    assert re.search(r" \[[\w.:-]+\]$", flagged), flagged  # the rule tag survives
    screen.send("d")
    screen.wait_for("ok")


def test_a_retried_stream_leaves_only_the_good_attempt(screen, fake_llm):
    fake_llm.enqueue(
        Fault.drop_mid_stream(3, Reply.text("partial0 partial1 partial2 partial3", chunk_size=9)),
        Reply.text("the real answer", chunk_size=4),
    )
    block = _ask(screen, "retry me", "the real answer")
    assert "the real answer" in block
    assert not any("partial" in line for line in block), block
