"""The process tool over background processes started by terminal(background=true).

Every process here is harmless (echo, printf, read, cat, sleep, yes|head) and
runs in a tmp directory.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_terminal_support import SECRET_VALUE, FakeHuman, Harness, make_harness

from herald.tools import process
from herald.tools.process import ACTIONS, DEFAULT_WAIT_S, MAX_LOG_CHARS


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    # Attended (a human who answers nothing): these tests are about the process tool;
    # unattended input is held to the unattended allowlist (test_input_passes_…).
    h = make_harness(tmp_path, approve=FakeHuman([]))
    yield h
    h.close()


def start(h: Harness, command: str) -> str:
    out = h.ok("terminal", command=command, background=True)
    return re.search(r"background process (proc_\w+)", out).group(1)  # type: ignore[union-attr]


def wait_for_output(h: Harness, process_id: str, needle: str) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if needle in h.json("process", action="poll", id=process_id)["output_tail"]:
            return
        time.sleep(0.02)
    raise AssertionError(f"{needle!r} never appeared")


def test_list_poll_and_incremental_log(harness: Harness) -> None:
    assert harness.json("process", action="list") == {"processes": []}
    pid = start(harness, 'echo one; read line; echo "$line"')
    wait_for_output(harness, pid, "one")
    polled = harness.json("process", action="poll", id=pid)
    assert polled["status"] == "running" and polled["output_tail"] == "one\n"
    assert polled["unread"] == 4  # poll does not move the read position
    first = harness.json("process", action="log", id=pid)
    assert first["output"] == "one\n" and first["offset"] == 4
    assert harness.json("process", action="log", id=pid)["output"] == ""  # nothing new
    written = harness.json("process", action="write", id=pid, input="two\n")
    assert written["written_chars"] == 4
    waited = harness.json("process", action="wait", id=pid, timeout=10)
    assert (waited["status"], waited["exit_code"], waited["output"]) == ("exited", 0, "two\n")
    again = harness.json("process", action="log", id=pid, offset=0)
    assert again["output"] == "one\ntwo\n"
    listed = harness.json("process", action="list")["processes"]
    assert [(p["id"], p["status"]) for p in listed] == [(pid, "exited")]


def test_wait_times_out_and_honours_interrupt(harness: Harness) -> None:
    pid = start(harness, "echo up; sleep 600")
    waited = harness.json("process", action="wait", id=pid, timeout=1)
    assert waited["status"] == "running" and waited["note"] == "still running after 1 s"
    threading.Timer(0.2, harness.ctx.cancel.set).start()
    started = time.monotonic()
    waited = harness.json("process", action="wait", id=pid, timeout=300)
    assert time.monotonic() - started < 5 and waited["note"] == "interrupted while waiting"
    harness.ctx.cancel.clear()
    killed = harness.json("process", action="kill", id=pid)
    assert killed["status"] == "killed" and killed["exit_code"] is None


def test_write_with_eof_closes_stdin(harness: Harness) -> None:
    pid = start(harness, "cat")
    harness.json("process", action="write", id=pid, input="hello\n", eof=True)
    waited = harness.json("process", action="wait", id=pid, timeout=10)
    assert waited["exit_code"] == 0 and waited["output"] == "hello\n"
    err = harness.error("process", action="write", id=pid, input="more")
    assert "already finished" in err


def test_input_passes_the_same_safety_gate(tmp_path: Path) -> None:
    h = make_harness(tmp_path, surface="cron")  # no human: dangerous input is refused
    pid = start(h, "cat")
    err = h.error("process", action="write", id=pid, input="python3 -c 'print(1)'\n")
    assert "no one can approve it here" in err
    # unattended, input is a command like any other: only read-only text or an
    # unattended allow pattern of the surface goes through (fail closed)
    err = h.error("process", action="write", id=pid, input="plain text\n")
    assert "`plain text` is not known read-only" in err
    h.ctx.unattended_allow = ("plain *",)
    assert h.json("process", action="write", id=pid, input="plain text\n")["written_chars"] == 11
    h.json("process", action="kill", id=pid)
    h.close()


def test_input_approved_by_a_human_is_written(tmp_path: Path) -> None:
    human = FakeHuman(["once"])
    h = make_harness(tmp_path, approve=human)
    pid = start(h, "cat")
    h.json("process", action="write", id=pid, input="python3 -c 'print(1)'\n", eof=True)
    assert (
        h.json("process", action="wait", id=pid, timeout=10)["output"] == "python3 -c 'print(1)'\n"
    )
    assert len(human.prompts) == 1
    h.close()


def test_long_logs_are_bounded_and_the_rest_is_readable_by_offset(harness: Harness) -> None:
    pid = start(harness, "yes abcdefghi | head -n 10000")  # 100,000 characters
    harness.json("process", action="wait", id=pid, timeout=30)
    log = harness.json("process", action="log", id=pid)  # wait already read it: nothing new
    assert log["output"] == "" and log["offset"] == 100_000
    chunk = harness.json("process", action="log", id=pid, offset=0)
    assert len(chunk["output"]) == MAX_LOG_CHARS and chunk["next_offset"] == MAX_LOG_CHARS
    last = harness.json("process", action="log", id=pid, offset=100_000 - 10)
    assert last["output"] == "abcdefghi\n" and last["offset"] == 100_000


def test_wait_output_keeps_head_and_tail_when_long(harness: Harness) -> None:
    pid = start(harness, "yes abcdefghi | head -n 10000")
    waited = harness.json("process", action="wait", id=pid, timeout=30)
    assert waited["exit_code"] == 0
    assert len(waited["output"]) <= MAX_LOG_CHARS
    assert "characters omitted" in waited["output"] and waited["offset"] == 100_000


def test_output_is_redacted(harness: Harness) -> None:
    pid = start(harness, f"echo key={SECRET_VALUE}")
    out = harness.json("process", action="wait", id=pid, timeout=10)["output"]
    assert SECRET_VALUE not in out and "[REDACTED]" in out
    assert SECRET_VALUE not in harness.ok("process", action="list")


def test_bad_calls_say_what_is_wrong(harness: Harness) -> None:
    assert "action must be one of" in harness.error("process", action="explode")
    assert "needs id" in harness.error("process", action="log")
    assert "known ids: none" in harness.error("process", action="kill", id="proc_nope")
    pid = start(harness, "sleep 600")
    assert "needs input" in harness.error("process", action="write", id=pid)
    assert "offset must be" in harness.error("process", action="log", id=pid, offset=-1)
    harness.json("process", action="kill", id=pid)


def test_the_schema_comes_from_the_signature() -> None:
    params = process.process.schema["parameters"]
    assert params["required"] == ["action"]
    props = params["properties"]
    assert props["action"] == {"type": "string", "enum": list(ACTIONS)}
    assert props["offset"]["type"] == "integer" and props["offset"]["minimum"] == 0
    assert props["timeout"]["minimum"] == 1 and props["eof"]["type"] == "boolean"
    assert f"default {DEFAULT_WAIT_S})" in props["timeout"]["description"]  # docstring in step
    assert set(props) == {"action", "id", "input", "timeout", "offset", "eof"}


def test_argument_errors_through_the_registry_are_clear(harness: Harness) -> None:
    err = harness.error("process", action="explode")
    assert "action must be one of 'list', 'poll', 'log', 'wait', 'kill' or 'write'" in err
    assert "got 'explode'" in err
    assert "action is required" in harness.error("process")
    assert "'bogus' is not an argument of process" in harness.error(
        "process", action="list", bogus=1
    )
    pid = start(harness, "sleep 600")
    assert "offset must be at least 0, got -1" in harness.error(
        "process", action="log", id=pid, offset=-1
    )
    assert "timeout must be at least 1, got 0" in harness.error(
        "process", action="wait", id=pid, timeout=0
    )
    assert "input must be a string, got 7" in harness.error(
        "process", action="write", id=pid, input=7
    )
    assert "eof must be true or false" in harness.error(
        "process", action="write", id=pid, input="x", eof="maybe"
    )
    harness.json("process", action="kill", id=pid)


def test_close_of_the_environment_kills_what_terminal_started(harness: Harness) -> None:
    pid = start(harness, "sleep 600")
    assert harness.ctx.environment is not None
    harness.ctx.environment.close()
    assert harness.json("process", action="poll", id=pid)["status"] != "running"
