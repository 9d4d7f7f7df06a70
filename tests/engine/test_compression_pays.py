"""Compression that pays for itself (issue 39): a compression that would save less than
`context.min_saving` changes nothing, an oversized newest tool result is cut and spilled
instead of compressing history that cannot shrink, and a turn that compressed before the
model call does not compress again for the same pressure. Real turns against the fake LLM
server; the compressor's own rule also at unit level."""

from __future__ import annotations

import re
from pathlib import Path

from herald.config.schema_context import ContextConfig
from herald.context.compressor import SECTIONS, CompressorEngine
from herald.engine import ExitReason
from herald.providers.message import Message
from herald.testing.fake_llm import Reply
from herald.testing.transcript_checks import transcript_problems

WINDOW_32K = {"model": {"context_length": 32_000}, "context": {"tail_tokens": 3000}}
LINE = "2026-12-01T10:00:00 INFO worker-7 processed batch with id {:08d} " + "x" * 60


def is_summarizer(req) -> bool:
    return bool(req.system) and req.system.startswith("You compress the history")


def sections_text() -> str:
    return "\n\n".join(f"## {s}\nprogress noted for {s}" for s in SECTIONS)


def big_file(tmp_path: Path) -> Path:
    """About 300 KB; read_file's default page of it is about 50 KB."""
    path = tmp_path / "work" / "big.log"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(LINE.format(i) for i in range(2400)) + "\n")
    return path


def read_then_answer(path: Path):
    def handler(req):
        if is_summarizer(req):
            return Reply.text(sections_text())
        if req.messages[-1]["role"] == "user":
            return Reply.tool_call("read_file", {"path": str(path)})
        return Reply.text("Read it.")

    return handler


def main_requests(server):
    return [r for r in server.model_requests() if not is_summarizer(r)]


def compressions(statuses: list[str]) -> list[str]:
    return [s for s in statuses if s.startswith("compressed the conversation")]


def saved_percent(status: str) -> int:
    match = re.search(r"saved (-?\d+)%", status)
    assert match, status
    return int(match.group(1))


# -- the compressor's own rule ----------------------------------------------------------


def _history(tail_chars: int) -> list[Message]:
    """A small head and middle, then one huge tool result in the protected tail."""
    messages = [Message("user", "first question")]
    for i in range(3):
        messages += [
            Message("assistant", f"answer {i}"),
            Message("user", f"follow-up {i}"),
        ]
    messages.append(Message("assistant", "looking"))
    messages.append(Message("user", "read the big file"))
    messages.append(Message("assistant", "x" * tail_chars))
    return messages


def test_a_compression_saving_less_than_the_minimum_returns_the_history_unchanged():
    engine = CompressorEngine(
        config=ContextConfig(tail_tokens=20_000, tail_fraction=0.9),
        context_window=32_000,
        summarizer=lambda messages: sections_text(),
    )
    messages = _history(tail_chars=50_000)
    after = engine.compress(messages)
    assert after is messages  # nothing summarized, nothing archived, no prefix break
    assert engine.last_report is None
    assert engine.state.compressions == 0


def test_a_compression_that_would_grow_the_prompt_is_never_applied_even_when_forced():
    engine = CompressorEngine(
        config=ContextConfig(summary_max_tokens=4000),
        context_window=32_000,
        # A summary longer than what it replaces: the "saved -1%" of the issue.
        summarizer=lambda messages: "\n\n".join(f"## {s}\n" + "y" * 2000 for s in SECTIONS),
    )
    messages = [Message("user", "q"), Message("assistant", "short"), Message("user", "again"),
                Message("assistant", "short too"), Message("user", "now")]  # fmt: skip
    after = engine.compress(messages, force=True)
    assert after is messages
    assert engine.state.compressions == 0


def test_a_compression_that_saves_enough_reports_its_reason():
    engine = CompressorEngine(
        config=ContextConfig(tail_tokens=1000),
        context_window=32_000,
        summarizer=lambda messages: sections_text(),
    )
    messages = [Message("user", "start")]
    for i in range(40):
        messages += [Message("assistant", f"step {i} " + "w" * 1500), Message("user", f"go {i}")]
    after = engine.compress(messages)
    assert after is not messages
    report = engine.last_report
    assert report is not None and report.reason == "threshold"
    assert report.saved_fraction >= 0.2
    assert engine.state.compressions == 1


# -- real turns -------------------------------------------------------------------------


def test_an_oversized_tool_result_is_cut_and_spilled_and_a_resume_sends_the_same_bytes(
    make_agent, fake_llm, tmp_path
):
    path = big_file(tmp_path)
    fake_llm.set_handler(read_then_answer(path))
    statuses: list[str] = []
    agent = make_agent(config=WINDOW_32K)
    agent.callbacks.on_status = statuses.append
    result = agent.run_turn("read the log")
    assert result.exit_reason is ExitReason.TEXT_RESPONSE, result.error

    sent = main_requests(fake_llm)[-1].messages[-1]
    assert sent["role"] == "tool"
    full = path.read_text()
    assert len(sent["content"]) < 40_000  # cut from the ~50 KB read_file returned
    match = re.search(r"full result \(([\d,]+) characters\) is saved at (\S+?);", sent["content"])
    assert match, sent["content"][-600:]
    spilled = Path(match.group(2)).read_text()
    assert LINE.format(0) in spilled and LINE.format(375) in spilled  # the whole page
    assert int(match.group(1).replace(",", "")) == len(spilled)
    assert sent["content"].startswith(spilled[:2000])  # a head excerpt …
    assert sent["content"].rstrip().endswith(spilled.rstrip()[-500:])  # … and a tail one
    assert len(full) > len(spilled)
    assert not compressions(statuses)  # the cut, not a compression, relieved the pressure
    stored = [m for m in agent.store.get_messages(result.session_id) if m.role == "tool"]
    assert stored[-1].content == sent["content"]  # what is stored is what was sent

    fake_llm.reset()
    fake_llm.set_handler(lambda req: Reply.text("again"))
    resumed = make_agent(config=WINDOW_32K, session_id=result.session_id)
    again = resumed.run_turn("thanks")
    assert again.exit_reason is ExitReason.TEXT_RESPONSE, again.error
    replayed = [m for m in main_requests(fake_llm)[-1].messages if m["role"] == "tool"]
    assert replayed[-1]["content"] == sent["content"]


def test_resumed_turns_reading_a_big_file_compress_at_most_once_per_turn_and_never_for_nothing(
    make_agent, fake_llm, tmp_path
):
    path = big_file(tmp_path)
    fake_llm.set_handler(read_then_answer(path))
    statuses: list[str] = []
    agent = make_agent(config=WINDOW_32K)
    session_id = None
    per_turn = []
    for turn in range(5):
        if session_id is not None:
            agent = make_agent(config=WINDOW_32K, session_id=session_id)
        agent.callbacks.on_status = statuses.append
        seen = len(statuses)
        result = agent.run_turn(f"part {turn + 1}: read the log again")
        assert result.exit_reason is ExitReason.TEXT_RESPONSE, result.error
        session_id = result.session_id
        per_turn.append(len(compressions(statuses[seen:])))
    assert max(per_turn) <= 1, per_turn
    assert all(saved_percent(s) >= 20 for s in compressions(statuses)), statuses
    for req in main_requests(fake_llm):
        assert not transcript_problems(req.messages)
    warnings = [s for s in statuses if "has been compressed" in s]
    if warnings:  # the count names only real compressions
        count = int(re.search(r"compressed (\d+) times", warnings[-1]).group(1))
        assert count == len(compressions(statuses))


def test_a_small_tool_result_is_never_cut(make_agent, fake_llm, tmp_path):
    path = tmp_path / "work" / "small.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("hello\n" * 50)
    fake_llm.set_handler(read_then_answer(path))
    agent = make_agent(config=WINDOW_32K)
    result = agent.run_turn("read it")
    assert result.exit_reason is ExitReason.TEXT_RESPONSE
    sent = main_requests(fake_llm)[-1].messages[-1]
    assert "is saved at" not in sent["content"]
    assert sent["content"].count("hello") == 50
