"""`herald chat -q`: Ctrl-C while a tool runs, and refusals nobody could approve."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from herald.testing.fake_llm import Reply


def _pids_running(marker: str) -> list[int]:
    """Live (non-zombie) processes whose command line contains ``marker`` (the sleep and
    any shell the terminal tool wrapped it in)."""
    wanted = marker.encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if wanted not in (entry / "cmdline").read_bytes():
                continue
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            found.append(int(entry.name))
    return found


def _wait_until(condition, timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


@pytest.mark.slow
def test_one_ctrl_c_during_a_tool_exits_130_with_one_line_and_no_children(
    herald_home, fake_llm, tmp_path
):
    seconds = f"30.{random.randrange(10**6):06d}"  # this test's own sleep, findable in /proc
    fake_llm.enqueue(
        Reply.tool_call("terminal", {"command": f"sleep {seconds}"}), Reply.text("never")
    )
    # Ctrl-C must reach herald as it would from a terminal. A suite started as a
    # background job (`cmd &` in a script) runs with SIGINT ignored, which a child
    # inherits and Python then leaves ignored; a handled signal is reset at exec.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "herald", "chat", "-q", "wait a bit"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=tmp_path,
            env=dict(os.environ),
        )
    finally:
        signal.signal(signal.SIGINT, previous)
    try:
        assert _wait_until(lambda: _pids_running(seconds)), "the tool never started"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "Traceback" not in err, err
    interrupt_lines = [line for line in err.splitlines() if "interrupt" in line.lower()]
    assert len(interrupt_lines) == 1, err
    assert "herald chat -r" in interrupt_lines[0]  # says how to continue
    assert out == ""
    assert _pids_running(seconds) == [], "the tool's child outlived herald"


def test_a_refusal_nobody_could_approve_is_explained_on_stderr(herald_home, fake_llm, tmp_path):
    (tmp_path / "victim.txt").write_text("keep me")
    fake_llm.enqueue(
        Reply.tool_call("terminal", {"command": "rm -rf victim.txt"}), Reply.text("I could not.")
    )
    proc = subprocess.run(
        [sys.executable, "-m", "herald", "chat", "-q", "clean"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "victim.txt").exists()
    refusal = next(line for line in proc.stderr.splitlines() if "refused" in line)
    assert "rm -rf victim.txt" in refusal
    assert "approvals.unattended" in proc.stderr  # how to allow it
    assert "terminal" in proc.stderr  # or run it where someone can answer
