"""The Environment contract, run identically against the local and the ssh backend.

Every command here is harmless (echo, printf, sleep, cat, pwd, env, true/false)
and runs inside the test's tmp directory.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest
from environment_support import (
    FAKE_SECRET_NAME,
    FAKE_SECRET_VALUE,
    host_pid,
    wait_dead,
    wait_for_file,
)

from herald.environments import Environment
from herald.environments.base import NotRegularFileError

# The bound for an interrupt killing `sleep 600` (a correctness bound, not a benchmark).
INTERRUPT_BOUND_S = 1.0


def _wait_output(process, needle: str, timeout: float = 10.0) -> str:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text, _ = process.read_output(0)
        if needle in text:
            return text
        time.sleep(0.02)
    raise AssertionError(f"{needle!r} never appeared in {process.read_output(0)[0]!r}")


# -- commands ---------------------------------------------------------------------


def test_echo_and_exit_codes(backend: Environment) -> None:
    ok = backend.execute("echo hello", cwd=None, timeout=30)
    assert (ok.output, ok.exit_code, ok.timed_out, ok.interrupted) == ("hello\n", 0, False, False)
    assert backend.execute("false", cwd=None, timeout=30).exit_code == 1
    assert backend.execute("exit 7", cwd=None, timeout=30).exit_code == 7


def test_a_commands_own_exit_255_is_not_an_infrastructure_failure(backend: Environment) -> None:
    result = backend.execute("echo before; exit 255", cwd=None, timeout=30)
    assert (result.output, result.exit_code) == ("before\n", 255)


def test_a_death_by_signal_is_reported_as_128_plus_n(backend: Environment) -> None:
    assert backend.execute("kill -TERM $$", cwd=None, timeout=30).exit_code == 143


def test_stderr_is_interleaved_with_stdout(backend: Environment) -> None:
    result = backend.execute("echo out1; echo err1 >&2; echo out2", cwd=None, timeout=30)
    assert result.output == "out1\nerr1\nout2\n"


def test_stdin_is_empty(backend: Environment) -> None:
    result = backend.execute("cat; echo done", cwd=None, timeout=30)
    assert result.output == "done\n"


def test_working_directory(backend: Environment, workdir: Path) -> None:
    sub = workdir / "sub dir"
    sub.mkdir()
    assert backend.cwd == str(workdir)
    assert backend.execute("pwd", cwd=None, timeout=30).output == f"{workdir}\n"
    assert backend.execute("pwd", cwd=str(sub), timeout=30).output == f"{sub}\n"
    assert backend.execute("pwd", cwd="sub dir", timeout=30).output == f"{sub}\n"
    with pytest.raises(FileNotFoundError, match="does not exist"):
        backend.execute("pwd", cwd=str(workdir / "missing"), timeout=30)


def test_env_additions_reach_the_command(backend: Environment) -> None:
    value = "two words, 'quotes' and $dollar"
    result = backend.execute(
        'printf "%s|%s" "$HERALD_TEST_VAR" "$PAGER"',
        cwd=None,
        timeout=30,
        env={"HERALD_TEST_VAR": value},
    )
    assert result.output == f"{value}|cat"


def test_secrets_are_absent_from_the_child_environment(
    backend: Environment, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A secret in .env (never exported), one in Herald's own environment, and a
    # harmless-looking name carrying a secret value.
    monkeypatch.setenv("HERALD_TEST_SERVICE_API_KEY", "zq-process-env-secret-1")
    monkeypatch.setenv("HERALD_TEST_INNOCENT", FAKE_SECRET_VALUE)
    monkeypatch.setenv("HERALD_TEST_VISIBLE", "plain-value")
    output = backend.execute("env", cwd=None, timeout=30).output
    assert FAKE_SECRET_NAME not in output and FAKE_SECRET_VALUE not in output
    assert "HERALD_TEST_SERVICE_API_KEY" not in output and "zq-process-env-secret" not in output
    assert "HERALD_TEST_INNOCENT" not in output
    if backend.name == "local":  # ssh sends nothing of Herald's environment at all
        assert "HERALD_TEST_VISIBLE=plain-value" in output


def test_a_secret_asked_for_by_name_is_passed(backend: Environment) -> None:
    result = backend.execute(
        f'printf "%s" "${FAKE_SECRET_NAME}"',
        cwd=None,
        timeout=30,
        env={FAKE_SECRET_NAME: FAKE_SECRET_VALUE},
    )
    assert result.output == FAKE_SECRET_VALUE


def test_timeout_kills_the_command(backend: Environment) -> None:
    result = backend.execute("echo started; sleep 600", cwd=None, timeout=0.5)
    assert result.timed_out and not result.interrupted and result.exit_code is None
    assert result.output == "started\n"
    assert result.duration_s < 10  # nowhere near the 600 s the command asked for


def test_a_command_ignoring_sigterm_is_killed_anyway(backend: Environment, workdir: Path) -> None:
    command = "trap '' TERM; sleep 600 & echo $! > ignoring.pid; wait"
    pid: list[int] = []

    def remember_pid(_message: str) -> None:  # while the command runs
        if not pid and (workdir / "ignoring.pid").exists():
            pid.append(host_pid(backend, int(wait_for_file(workdir / "ignoring.pid"))))

    result = backend.execute(command, cwd=None, timeout=1.0, on_activity=remember_pid)
    assert result.timed_out and result.duration_s < 10
    assert pid and wait_dead(pid[0])


def test_interrupt_kills_sleep_600_and_its_children(backend: Environment, workdir: Path) -> None:
    cancel = threading.Event()
    done: dict[str, object] = {}

    def run() -> None:
        done["result"] = backend.execute(
            "sleep 600 & echo $! > child.pid; echo $$ > shell.pid; exec sleep 600",
            cwd=None,
            timeout=120,
            cancel=cancel,
        )
        done["at"] = time.monotonic()

    thread = threading.Thread(target=run)
    thread.start()
    child = host_pid(backend, int(wait_for_file(workdir / "child.pid")))
    shell = host_pid(backend, int(wait_for_file(workdir / "shell.pid")))
    decided = time.monotonic()
    cancel.set()
    thread.join(10)
    assert not thread.is_alive()
    elapsed = float(done["at"]) - decided  # type: ignore[arg-type]
    result = done["result"]
    assert result.interrupted and result.exit_code is None  # type: ignore[attr-defined]
    assert elapsed < INTERRUPT_BOUND_S, f"interrupt took {elapsed:.2f} s"
    assert wait_dead(shell, timeout=0.5) and wait_dead(child, timeout=0.5)


def test_large_output_is_drained_without_deadlock(backend: Environment) -> None:
    result = backend.execute("yes 0123456789 | head -n 300000; echo END", cwd=None, timeout=60)
    assert result.exit_code == 0
    assert len(result.output) == 300000 * 11 + 4
    assert result.output.endswith("0123456789\nEND\n")


def test_activity_is_reported_for_long_commands(backend: Environment) -> None:
    seen: list[str] = []
    backend.execute(
        "for i in 1 2 3 4 5 6; do echo tick $i; sleep 0.2; done",
        cwd=None,
        timeout=30,
        on_activity=seen.append,
    )
    assert seen and any("tick" in message for message in seen)
    assert len(seen) < 10  # throttled, not one call per line or per poll
    quiet: list[str] = []
    backend.execute("echo quick", cwd=None, timeout=30, on_activity=quiet.append)
    assert quiet == []


# -- files ------------------------------------------------------------------------


def test_file_round_trip(backend: Environment, workdir: Path) -> None:
    data = b"line one\n\x00binary\xff\n"
    backend.write_bytes("nested/dir/file.bin", data)  # parents created, relative to cwd
    path = workdir / "nested" / "dir" / "file.bin"
    assert path.read_bytes() == data
    assert backend.read_bytes(str(path)) == data
    assert backend.read_bytes("nested/dir/file.bin", max_bytes=4) == b"line"
    info = backend.stat("nested/dir/file.bin")
    assert info is not None and (info.path, info.size, info.is_dir) == (str(path), len(data), False)
    assert abs(info.mtime - path.stat().st_mtime) < 1.0
    directory = backend.stat(str(workdir / "nested"))
    assert directory is not None and directory.is_dir
    assert backend.stat("missing.txt") is None
    leftovers = [p.name for p in path.parent.iterdir() if p.name != "file.bin"]
    assert leftovers == []  # the temp file was renamed into place


def test_file_errors(backend: Environment, workdir: Path) -> None:
    with pytest.raises(FileNotFoundError):
        backend.read_bytes("missing.txt")
    (workdir / "adir").mkdir()
    with pytest.raises(IsADirectoryError):
        backend.read_bytes("adir")
    with pytest.raises(IsADirectoryError):
        backend.write_bytes("adir", b"x")


def test_a_named_pipe_or_a_device_is_refused_not_waited_on(
    backend: Environment, workdir: Path
) -> None:
    os.mkfifo(workdir / "pipe")
    (workdir / "to-pipe").symlink_to(workdir / "pipe")
    (workdir / "plain.txt").write_text("x")
    kinds = {name: backend.stat(name) for name in ("pipe", "to-pipe", "plain.txt", ".")}
    assert {name: (i.is_regular, i.is_dir) for name, i in kinds.items() if i} == {
        "pipe": (False, False),
        "to-pipe": (False, False),
        "plain.txt": (True, False),
        ".": (False, True),
    }
    for path in ("pipe", "to-pipe", "/dev/null"):
        box: dict[str, BaseException] = {}

        def read(path: str = path, box: dict[str, BaseException] = box) -> None:
            try:
                backend.read_bytes(path, max_bytes=10)
            except BaseException as exc:
                box["error"] = exc

        thread = threading.Thread(target=read, daemon=True)
        thread.start()
        thread.join(30)  # opening a pipe used to wait for a writer forever
        assert isinstance(box.get("error"), NotRegularFileError), (path, box)


def test_overwrite_keeps_mode_and_symlinks(backend: Environment, workdir: Path) -> None:
    target = workdir / "script.sh"
    target.write_text("old\n")
    target.chmod(0o750)
    link = workdir / "link.sh"
    link.symlink_to(target)
    backend.write_bytes("link.sh", b"new\n")
    assert link.is_symlink() and target.read_text() == "new\n"
    assert (target.stat().st_mode & 0o777) == 0o750


def test_resolve(backend: Environment, workdir: Path) -> None:
    assert backend.resolve("a/../b.txt") == str(workdir / "b.txt")
    assert backend.resolve("/etc/./hosts") == "/etc/hosts"
    assert backend.resolve("x", cwd="/opt") == "/opt/x"
    home = backend.execute('printf "%s" "$HOME"', cwd=None, timeout=30).output
    assert backend.resolve("~/notes") == os.path.join(home, "notes")


# -- background processes ---------------------------------------------------------


def test_background_spawn_log_write_wait(backend: Environment, workdir: Path) -> None:
    process = backend.spawn('echo start; read line; echo "got $line"; exit 4', cwd=None)
    assert process.id and process.command.startswith("echo start")
    _wait_output(process, "start\n")
    assert process.poll() is None
    process.write_stdin("hello\n")
    assert process.wait(10) == 4
    text, offset = process.read_output(0)
    assert text == "start\ngot hello\n" and offset == len(text)
    assert process.read_output(offset) == ("", offset)
    assert process.read_output(6) == ("got hello\n", offset)


def test_background_wait_honours_cancel_and_kill_ends_the_group(
    backend: Environment, workdir: Path
) -> None:
    process = backend.spawn("sleep 600 & echo $! > bg-child.pid; sleep 600", cwd=None)
    child = host_pid(backend, int(wait_for_file(workdir / "bg-child.pid")))
    cancel = threading.Event()
    cancel.set()
    started = time.monotonic()
    assert process.wait(60, cancel) is None
    assert time.monotonic() - started < 5
    assert process.wait(0.1) is None  # still running
    process.kill()
    assert process.poll() is not None
    assert wait_dead(child)


def test_close_kills_background_processes(backend: Environment, workdir: Path) -> None:
    process = backend.spawn("echo $$ > bg.pid; exec sleep 600", cwd=None)
    pid = host_pid(backend, int(wait_for_file(workdir / "bg.pid")))
    backend.close()
    assert process.poll() is not None
    assert wait_dead(pid)


def test_background_output_from_the_working_directory(backend: Environment, workdir: Path) -> None:
    (workdir / "sub").mkdir()
    process = backend.spawn("pwd; echo $HERALD_BG", cwd="sub", env={"HERALD_BG": "bg-value"})
    assert process.wait(10) == 0
    assert process.read_output(0)[0] == f"{workdir / 'sub'}\nbg-value\n"
