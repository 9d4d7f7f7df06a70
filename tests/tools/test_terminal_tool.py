"""The terminal tool: running, output shaping, refusals, errors, background start.

Commands that run are harmless (echo, printf, seq, sleep, pwd, true/false) in a
tmp directory. Hard-line strings are only handed to the tool, which refuses
them; they never reach a shell.
"""

from __future__ import annotations

import re
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_terminal_support import SECRET_NAME, SECRET_VALUE, FakeHuman, Harness, make_harness

from herald.config.schema_terminal import MAX_OUTPUT_CHARS_LIMIT
from herald.environments import SshEnvironment
from herald.tools import terminal

# Refused by the hard-line floor; the device does not exist, so even a broken
# gate could do no harm with it.
HARDLINE_COMMAND = "mkfs.ext4 /dev/herald-nonexistent-test-device"
STATUS_RE = re.compile(r"\n\[exit (-?\d+) · \d+\.\d s\]$")


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    h = make_harness(tmp_path)
    yield h
    h.close()


def test_runs_a_command_and_reports_exit_code_and_duration(harness: Harness) -> None:
    out = harness.ok("terminal", command="echo hello")
    assert out.startswith("hello\n") and STATUS_RE.search(out)
    assert STATUS_RE.search(out).group(1) == "0"  # type: ignore[union-attr]


def test_a_failing_command_is_a_result_not_a_tool_error(harness: Harness) -> None:
    out = harness.ok("terminal", command="echo oops >&2; exit 3")
    assert out.startswith("oops\n") and re.search(r"\[exit 3 · ", out)
    assert harness.ok("terminal", command="true").startswith("(no output)\n[exit 0")


def test_workdir_is_resolved_against_the_session_directory(harness: Harness) -> None:
    (harness.work / "pkg").mkdir()
    assert harness.ok("terminal", command="pwd", workdir="pkg").startswith(f"{harness.work}/pkg\n")
    err = harness.error("terminal", command="pwd", workdir="nope")
    assert "does not exist" in err


def test_timeout_kills_and_says_so(harness: Harness) -> None:
    out = harness.ok("terminal", command="echo begin; sleep 30", timeout=1)
    assert out.startswith("begin\n") and out.endswith("[killed after timeout 1 s]")


@pytest.mark.parametrize("bad", [0, -5, 10**6, "soon", True])
def test_bad_timeouts_are_refused_with_the_range(harness: Harness, bad: object) -> None:
    err = harness.error("terminal", command="echo x", timeout=bad)
    assert "timeout" in err


def test_bad_arguments(harness: Harness) -> None:
    assert "non-empty" in harness.error("terminal", command="   ")
    assert "true or false" in harness.error("terminal", command="echo", background="maybe")


def test_the_schema_comes_from_the_signature() -> None:
    params = terminal.terminal.schema["parameters"]
    assert params["required"] == ["command"]
    props = params["properties"]
    assert props["timeout"]["type"] == "integer" and props["timeout"]["minimum"] == 1
    assert props["background"]["type"] == "boolean" and props["workdir"]["type"] == "string"
    assert all(prop.get("description") for prop in props.values())
    assert "background=true" in terminal.terminal.schema["description"]


def test_argument_errors_through_the_registry_are_clear(harness: Harness) -> None:
    assert "command is required" in harness.error("terminal")
    assert "command must be a string, got 5" in harness.error("terminal", command=5)
    assert "timeout must be at least 1, got 0" in harness.error("terminal", command="x", timeout=0)
    assert "timeout must be an integer, got a boolean" in harness.error(
        "terminal", command="x", timeout=True
    )
    err = harness.error("terminal", command="x", timeout=10**6)
    assert "at most" in err and "background=true" in err
    err = harness.error("terminal", command="echo", bogus=1)
    assert "'bogus' is not an argument of terminal" in err
    assert "NUL" in harness.error("terminal", command="echo a\x00b")


def test_interrupt_stops_the_command(harness: Harness) -> None:
    threading.Timer(0.3, harness.ctx.cancel.set).start()
    started = time.monotonic()
    out = harness.ok("terminal", command="sleep 600")
    assert time.monotonic() - started < 5
    assert out.endswith("]") and "[interrupted by the user · after" in out


def test_long_output_keeps_head_and_tail_and_the_status_survives(tmp_path: Path) -> None:
    h = make_harness(tmp_path, {"terminal": {"max_output_chars": 1000}})
    try:
        out = h.ok("terminal", command="seq 1 20000")
    finally:
        h.close()
    full = "".join(f"{i}\n" for i in range(1, 20001)).rstrip("\n")
    body, status = out.rsplit("\n", 1)
    match = re.fullmatch(
        r"\[exit 0 · \d+\.\d s · output truncated: ([\d,]+) chars, full text: (\S+)\]", status
    )
    assert match, status
    assert int(match.group(1).replace(",", "")) == len(full)
    spilled = Path(match.group(2))
    assert spilled.parent == h.settings.home.cache_dir / "tool-results"
    assert spilled.read_text() == full
    assert body.startswith("1\n2\n3\n") and body.endswith("19999\n20000")
    assert len(body) <= 1000
    head, tail = body.split("[… output truncated", 1)
    assert len(head) < len(tail)  # 40 % head, 60 % tail


def test_the_registry_cap_is_above_the_terminal_cap() -> None:
    from herald.tools.registry import ToolRegistry

    reg = ToolRegistry()
    terminal.register(reg)
    spec = reg.get("terminal")
    assert spec is not None and spec.max_result_chars > MAX_OUTPUT_CHARS_LIMIT + 1000
    assert spec.parallel_safe is False and spec.toolset == "terminal"


def test_secrets_echoed_by_a_command_are_redacted(harness: Harness) -> None:
    out = harness.ok("terminal", command=f"echo token={SECRET_VALUE}")
    assert SECRET_VALUE not in out and "[REDACTED]" in out
    # …and the child never had it in its environment in the first place.
    out = harness.ok("terminal", command=f'printf "[%s]" "${SECRET_NAME}"')
    assert out.startswith("[]\n")


def test_hardline_commands_are_refused_without_asking(tmp_path: Path) -> None:
    human = FakeHuman(["once"])
    for mode in ("manual", "off"):
        h = make_harness(tmp_path, {"approvals": {"mode": mode}}, approve=human)
        err = h.error("terminal", command=HARDLINE_COMMAND)
        assert "blocked whatever the configuration" in err and "hardline.mkfs" in err
        h.close()
    assert human.prompts == []


def test_commands_over_the_parser_limits_are_saved_as_a_script(harness: Harness) -> None:
    command = "echo " + "a" * 5000  # one 5,000-character word: too long to check
    err = harness.error("terminal", command=command)
    assert "hardline.parser_limits" in err
    path = Path(re.search(r"saved as a script at (\S+) ", err).group(1))  # type: ignore[union-attr]
    assert path.parent == harness.settings.home.cache_dir / "blocked-scripts"
    assert path.read_text().endswith(command + "\n")
    assert (path.stat().st_mode & 0o777) == 0o600
    harness.ctx.approve = FakeHuman([])  # unattended, `bash FILE` needs an allow pattern
    out = harness.ok("terminal", command=f"bash {path}")  # the normal path
    assert out.startswith("a" * 100) and "[exit 0 · " in out


def test_an_unreachable_environment_is_reported_as_such(tmp_path: Path) -> None:
    if shutil.which("ssh") is None:
        pytest.skip("the ssh client is not installed")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    env = SshEnvironment(
        "127.0.0.1",
        port=port,
        options=["StrictHostKeyChecking=no", f"UserKnownHostsFile={tmp_path / 'kh'}"],
        cwd="/",
        connect_timeout=3,
    )
    h = make_harness(tmp_path, environment=env)
    try:
        err = h.error("terminal", command="echo hi")
    finally:
        h.close()
    assert "the environment is unreachable, do not try to fix it" in err
    assert "Connection refused" in err


def test_without_an_environment_one_is_created_from_the_config(tmp_path: Path) -> None:
    work = tmp_path / "elsewhere"
    work.mkdir()
    h = make_harness(tmp_path, {"terminal": {"cwd": str(work)}}, with_environment=False)
    try:
        assert h.ok("terminal", command="pwd").startswith(f"{work}\n")
        assert h.ctx.environment is not None and h.ctx.environment.name == "local"
    finally:
        h.close()


def test_a_bad_backend_config_is_a_clear_error(tmp_path: Path) -> None:
    h = make_harness(tmp_path, {"terminal": {"backend": "ssh"}}, with_environment=False)
    err = h.error("terminal", command="echo hi")
    assert "terminal.ssh.host is not set" in err


def test_background_start_returns_an_id_at_once(harness: Harness) -> None:
    started = time.monotonic()
    out = harness.ok("terminal", command="sleep 600", background=True)
    assert time.monotonic() - started < 5
    process_id = re.search(r"background process (proc_\w+)", out).group(1)  # type: ignore[union-attr]
    assert 'process(action="log"' in out
    listed = harness.json("process", action="list")["processes"]
    assert [p["id"] for p in listed] == [process_id] and listed[0]["status"] == "running"
    killed = harness.json("process", action="kill", id=process_id)
    assert killed["status"] == "killed"
