"""execute_code: a script that calls Herald's tools, end to end through a real turn
against the fake model, with real processes in the local environment.

The model is the attacker in half of these: every way a script could reach past a
gate (its own command, a dangerous command through `terminal`, a tool the turn does
not offer, Herald's own config) is tried attended and unattended.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest

from herald.engine import ExitReason, Humans, TurnCallbacks
from herald.testing.fake_llm import Reply

ENABLE = {"toolsets": {"enabled": ["execute_code"]}}


def _tool_results(request) -> list[str]:
    return [str(m["content"]) for m in request.messages if m["role"] == "tool"]


def _last_result(fake_llm) -> str:
    return _tool_results(fake_llm.model_requests()[-1])[-1]


class Approver:
    """A human at the prompt who answers from a list (then denies) and remembers what
    they were asked."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.asked: list[str] = []

    def __call__(self, prompt) -> str:
        self.asked.append(prompt.command)
        return self.answers.pop(0) if self.answers else "deny"


def _run(agent, text="go", **kwargs):
    return agent.start_turn(text, **kwargs).result(timeout=60)


def test_a_script_making_20_reads_costs_one_model_round_trip(make_agent, fake_llm, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    for i in range(20):
        (work / f"note{i}.txt").write_text(f"content of note {i}\n")
    script = (
        "import herald_tools\n"
        "for i in range(20):\n"
        "    text = herald_tools.read_file(path=f'note{i}.txt')\n"
        "    print(i, 'note' in text and f'content of note {i}' in text)\n"
    )
    fake_llm.enqueue(Reply.tool_call("execute_code", {"code": script}), Reply.text("read them"))
    agent = make_agent(config=ENABLE)
    started: list[str] = []
    human = Approver("once")
    result = _run(
        agent,
        callbacks=TurnCallbacks(on_tool_start=lambda name, _a: started.append(name)),
        humans=Humans(approve=human),
    )
    assert result.final_text == "read them"
    requests = fake_llm.model_requests()
    assert len(requests) == 2  # the call, then the answer: not 21 requests
    out = _tool_results(requests[1])[-1]
    assert [line for line in out.splitlines() if line.endswith("True")] == [
        f"{i} True" for i in range(20)
    ]
    assert out.endswith("[ok · 20 tool calls]")
    # The script itself was approved once, as the inline Python it is.
    assert len(human.asked) == 1 and human.asked[0].startswith("python3 -c")
    # Each nested call is shown to the surface like a direct one.
    assert started == ["execute_code"] + ["read_file"] * 20


def test_positional_arguments_and_tool_errors_reach_the_script(make_agent, fake_llm, tmp_path):
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "a.txt").write_text("alpha\n")
    script = (
        "import herald_tools as t\n"
        "print('alpha' in t.read_file('a.txt'))\n"
        "try:\n"
        "    t.read_file('missing.txt')\n"
        "except t.ToolError as exc:\n"
        "    print('error:', 'missing.txt' in str(exc))\n"
        "print(sorted(t.__all__))\n"
    )
    fake_llm.enqueue(Reply.tool_call("execute_code", {"code": script}), Reply.text("ok"))
    _run(make_agent(config=ENABLE), humans=Humans(approve=Approver("once")))
    out = _last_result(fake_llm)
    assert "True\nerror: True\n" in out
    assert "'read_file'" in out and "'terminal'" in out and "'execute_code'" not in out


def test_a_childs_output_joins_the_scripts_in_order(make_agent, fake_llm, tmp_path):
    (tmp_path / "work").mkdir()
    script = (
        "import subprocess\n"
        "print('one', flush=True)\n"
        "subprocess.run(['echo', 'from the child'])\n"
        "print('two')\n"
    )
    fake_llm.enqueue(Reply.tool_call("execute_code", {"code": script}), Reply.text("ok"))
    _run(make_agent(config=ENABLE), humans=Humans(approve=Approver("once")))
    assert _last_result(fake_llm) == "one\nfrom the child\ntwo\n[ok · 0 tool calls]"


def test_a_dangerous_terminal_call_in_a_script_asks_the_human(make_agent, fake_llm, tmp_path):
    data = tmp_path / "work" / "data"
    data.mkdir(parents=True)
    (data / "keep.txt").write_text("precious")
    script = (
        "import herald_tools as t\n"
        "try:\n"
        "    print(t.terminal(command='rm -r data'))\n"
        "except t.ToolError as exc:\n"
        "    print('refused:', exc)\n"
    )
    fake_llm.enqueue(Reply.tool_call("execute_code", {"code": script}), Reply.text("ok"))
    human = Approver("once", "deny")  # the script yes, the rm no
    _run(make_agent(config=ENABLE), humans=Humans(approve=human))
    assert len(human.asked) == 2 and human.asked[1] == "rm -r data"
    assert (data / "keep.txt").read_text() == "precious"
    assert "refused:" in _last_result(fake_llm) and "denied" in _last_result(fake_llm)


def test_a_dangerous_terminal_call_in_an_unattended_script_is_refused(
    make_agent, fake_llm, tmp_path
):
    """The owner allowed scripts for unattended turns; that allows nothing inside them."""
    data = tmp_path / "work" / "data"
    data.mkdir(parents=True)
    (data / "keep.txt").write_text("precious")
    script = (
        "import herald_tools as t\n"
        "try:\n"
        "    print(t.terminal(command='rm -r data'))\n"
        "except t.ToolError as exc:\n"
        "    print('refused:', exc)\n"
        "print(t.terminal(command='ls'))\n"
    )
    fake_llm.enqueue(Reply.tool_call("execute_code", {"code": script}), Reply.text("ok"))
    config = {**ENABLE, "approvals": {"unattended_allow": ["python3 *"]}}
    _run(make_agent(config=config))  # no humans: unattended
    out = _last_result(fake_llm)
    assert "refused: Not run:" in out and "no one can approve it here" in out
    assert "data" in out.split("refused:")[1]  # the ls ran (read-only) and listed data
    assert (data / "keep.txt").read_text() == "precious"


def test_an_unattended_script_is_refused_before_it_runs(make_agent, fake_llm, tmp_path):
    (tmp_path / "work").mkdir()
    marker = tmp_path / "work" / "ran.txt"
    script = f"open({str(marker)!r}, 'w').write('side door')\n"
    fake_llm.enqueue(Reply.tool_call("execute_code", {"code": script}), Reply.text("ok"))
    _run(make_agent(config=ENABLE))
    out = _last_result(fake_llm)
    assert out.startswith("[TOOL_ERROR] Not run:") and "no one can approve it here" in out
    assert not marker.exists()


def test_a_denied_script_never_runs(make_agent, fake_llm, tmp_path):
    (tmp_path / "work").mkdir()
    marker = tmp_path / "work" / "ran.txt"
    script = f"open({str(marker)!r}, 'w').write('side door')\n"
    fake_llm.enqueue(Reply.tool_call("execute_code", {"code": script}), Reply.text("ok"))
    _run(make_agent(config=ENABLE), humans=Humans(approve=Approver("deny")))
    assert "denied" in _last_result(fake_llm)
    assert not marker.exists()


def test_a_hard_line_command_inside_the_script_is_refused_whatever_the_mode(
    make_agent, fake_llm, tmp_path
):
    (tmp_path / "work").mkdir()
    script = "import os\nos.system('rm -rf /')\n"
    fake_llm.enqueue(Reply.tool_call("execute_code", {"code": script}), Reply.text("ok"))
    human = Approver("once")
    _run(make_agent(config={**ENABLE, "approvals": {"mode": "off"}}), humans=Humans(approve=human))
    assert "blocked whatever the configuration" in _last_result(fake_llm)
    assert human.asked == []


def test_a_script_cannot_write_heralds_config_through_write_file(make_agent, fake_llm, tmp_path):
    (tmp_path / "work").mkdir()
    agent = make_agent(config=ENABLE)
    config_path = agent.runtime.home.config_path
    before = config_path.read_text()
    script = (
        "import herald_tools as t\n"
        "try:\n"
        f"    t.write_file(path={str(config_path)!r}, content='approvals:\\n  mode: off\\n')\n"
        "except t.ToolError as exc:\n"
        "    print('refused:', exc)\n"
    )
    fake_llm.enqueue(Reply.tool_call("execute_code", {"code": script}), Reply.text("ok"))
    human = Approver("once", "once", "once")  # even a human saying yes to everything
    _run(agent, humans=Humans(approve=human))
    assert "refused:" in _last_result(fake_llm)
    assert config_path.read_text() == before


def test_tools_outside_the_list_or_the_turn_cannot_be_called(make_agent, fake_llm, tmp_path):
    (tmp_path / "work").mkdir()
    script = (
        "import herald_tools as t\n"
        "for name in ('execute_code', 'delegate_task', 'memory', 'no_such_tool'):\n"
        "    try:\n"
        "        t.call(name, code='print(1)')\n"
        "    except t.ToolError as exc:\n"
        "        print(name, 'refused' if 'cannot be called' in str(exc) else exc)\n"
    )
    fake_llm.enqueue(Reply.tool_call("execute_code", {"code": script}), Reply.text("ok"))
    started: list[str] = []
    _run(
        make_agent(config=ENABLE),
        humans=Humans(approve=Approver("once")),
        callbacks=TurnCallbacks(on_tool_start=lambda name, _a: started.append(name)),
    )
    out = _last_result(fake_llm)
    for name in ("execute_code", "delegate_task", "memory", "no_such_tool"):
        assert f"{name} refused" in out
    assert started == ["execute_code"]


def test_the_tool_call_limit_and_output_limit(make_agent, fake_llm, tmp_path):
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "a.txt").write_text("a\n")
    script = (
        "import herald_tools as t\n"
        "ok = 0\n"
        "for i in range(5):\n"
        "    try:\n"
        "        t.read_file('a.txt'); ok += 1\n"
        "    except t.ToolError as exc:\n"
        "        last = str(exc)\n"
        "print(ok, last)\n"
        "print('x' * 5000)\n"
    )
    fake_llm.enqueue(Reply.tool_call("execute_code", {"code": script}), Reply.text("ok"))
    config = {**ENABLE, "execute_code": {"max_tool_calls": 3, "max_output_chars": 500}}
    _run(make_agent(config=config), humans=Humans(approve=Approver("once")))
    out = _last_result(fake_llm)
    assert out.startswith("3 read_file was not run: this script already made 3 tool calls")
    assert "x" * 300 in out and "x" * 5000 not in out
    assert "more characters of output were not kept" in out
    assert "[2 tool calls over the limit were refused]" in out and "3 tool calls]" in out


def test_a_script_past_its_timeout_is_stopped(make_agent, fake_llm, tmp_path):
    (tmp_path / "work").mkdir()
    script = "print('started', flush=True)\nwhile True:\n    pass\n"
    fake_llm.enqueue(
        Reply.tool_call("execute_code", {"code": script, "timeout": 1}), Reply.text("ok")
    )
    _run(make_agent(config=ENABLE), humans=Humans(approve=Approver("once")))
    out = _last_result(fake_llm)
    assert out.startswith("started") and "stopped after 1 s (timeout)" in out


def test_a_script_error_shows_its_traceback(make_agent, fake_llm, tmp_path):
    (tmp_path / "work").mkdir()
    fake_llm.enqueue(
        Reply.tool_call("execute_code", {"code": "print('before')\n1/0\n"}), Reply.text("ok")
    )
    _run(make_agent(config=ENABLE), humans=Humans(approve=Approver("once")))
    out = _last_result(fake_llm)
    assert out.startswith("before\nTraceback") and "ZeroDivisionError" in out
    assert "herald_runner" not in out and out.endswith("[error · 0 tool calls]")


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


def test_an_interrupt_stops_the_script_and_its_children(make_agent, fake_llm, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    pids = work / "pids.json"
    script = (
        "import json, os, subprocess, time\n"
        "child = subprocess.Popen(['sleep', '300'])\n"
        f"open({str(pids)!r} + '.tmp', 'w').write(json.dumps([os.getpid(), child.pid]))\n"
        f"os.replace({str(pids)!r} + '.tmp', {str(pids)!r})\n"
        "time.sleep(300)\n"
    )
    fake_llm.enqueue(Reply.tool_call("execute_code", {"code": script}), Reply.text("unused"))
    agent = make_agent(config=ENABLE)
    handle = agent.start_turn("go", humans=Humans(approve=Approver("once")))
    deadline = time.monotonic() + 30
    while not pids.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    script_pid, child_pid = json.loads(pids.read_text())
    assert _alive(script_pid) and _alive(child_pid)
    handle.interrupt()
    result = handle.result(timeout=30)
    assert result.exit_reason is ExitReason.INTERRUPTED_BY_USER
    deadline = time.monotonic() + 10
    while (_alive(script_pid) or _alive(child_pid)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(script_pid) and not _alive(child_pid)


HERALD_LIKE = """
import sys, threading
sys.path.insert(0, {src!r})
from herald.environments import LocalEnvironment
from herald.tools.execute_code.channel import Limits, ScriptRun


class NoTools:
    def names(self):
        return ()

    def definition(self, name):
        return None

    def call(self, name, arguments):
        raise AssertionError("no calls expected")


run = ScriptRun(LocalEnvironment({work!r}), NoTools(), [], Limits(600, 1000, 1), threading.Event())
run.run({code!r}, {work!r})
"""


def test_a_script_dies_with_the_herald_that_ran_it(tmp_path):
    """kill -9 of Herald closes the script's channel; the runner then ends the script and
    everything it started, instead of leaving them running unwatched."""
    import signal
    import subprocess
    import sys

    work = tmp_path / "work"
    work.mkdir()
    pids = work / "pids.json"
    code = (
        "import json, os, subprocess, time\n"
        "child = subprocess.Popen(['sleep', '300'])\n"
        f"open({str(pids)!r} + '.tmp', 'w').write(json.dumps([os.getpid(), child.pid]))\n"
        f"os.replace({str(pids)!r} + '.tmp', {str(pids)!r})\n"
        "time.sleep(300)\n"
    )
    src = str(Path(__file__).resolve().parents[2] / "src")
    script = tmp_path / "herald_like.py"
    script.write_text(HERALD_LIKE.format(src=src, work=str(work), code=code))
    herald = subprocess.Popen([sys.executable, str(script)], start_new_session=True)
    started: list[int] = []
    try:
        deadline = time.monotonic() + 30
        while not pids.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        started = json.loads(pids.read_text())
        assert all(_alive(pid) for pid in started)
        os.kill(herald.pid, signal.SIGKILL)
        herald.wait()
        deadline = time.monotonic() + 10
        while any(_alive(pid) for pid in started) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(_alive(pid) for pid in started)
    finally:  # whatever failed above, leave nothing running
        for pid in [herald.pid, *started]:
            try:
                os.killpg(os.getpgid(pid), signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        herald.wait()


def test_outside_a_turn_execute_code_refuses(tmp_path):
    from herald.tools import ToolContext, ToolRegistry
    from herald.tools.execute_code import register

    registry = ToolRegistry()
    register(registry)
    result = registry.dispatch("execute_code", {"code": "print(1)"}, ToolContext())
    assert result.is_error and "only run inside an agent turn" in result.content


@pytest.mark.parametrize("python", ["python3-does-not-exist"])
def test_a_missing_interpreter_is_named(make_agent, fake_llm, tmp_path, python):
    (tmp_path / "work").mkdir()
    fake_llm.enqueue(Reply.tool_call("execute_code", {"code": "print(1)"}), Reply.text("ok"))
    config = {**ENABLE, "execute_code": {"python": python}}
    _run(make_agent(config=config), humans=Humans(approve=Approver("once")))
    out = _last_result(fake_llm)
    assert f"{python} was not found in the environment (execute_code.python)" in out


def test_the_script_runs_with_no_secrets_in_its_environment(make_agent, fake_llm, tmp_path):
    (tmp_path / "work").mkdir()
    script = "import os\nprint(sorted(k for k in os.environ if 'KEY' in k))\n"
    fake_llm.enqueue(Reply.tool_call("execute_code", {"code": script}), Reply.text("ok"))
    agent = make_agent(config=ENABLE, env={"OPENAI_API_KEY": "sk-test-should-not-leak-1234"})
    _run(agent, humans=Humans(approve=Approver("once")))
    assert _last_result(fake_llm).startswith("[]")


def test_the_runner_source_ships_with_the_package():
    from herald.tools.execute_code.channel import bootstrap_command, runner_source

    assert "herald_runner" in bootstrap_command("python3")
    compile(runner_source(), "runner", "exec")


class _ExitedBeforeItsOutputWasRead:
    """A script process that has exited while the reader thread still holds its last
    output: what a loaded machine makes of a script that reports and exits at once.
    Its output reaches `read_output` only once `wait` has let the reader finish."""

    def __init__(self, output: str) -> None:
        self.output, self.drained = output, False

    def poll(self) -> int:
        return 0

    def wait(self, timeout: float, cancel: object = None) -> int:
        self.drained = True
        return 0

    def read_output(self, since: int = 0) -> tuple[str, int]:
        text = self.output if self.drained else ""
        return text[since:], max(since, len(text))

    def write_stdin(self, data: str) -> None:
        pass

    def kill(self) -> None:
        pass


def test_a_report_still_in_the_reader_when_the_script_exits_is_not_a_crash():
    # CI saw "the script's process ended without reporting (exit 0)" for a script that
    # had reported: its exit was seen before the reader had passed on its last lines.
    from herald.tools.execute_code.channel import Limits, ScriptRun

    class NoTools:
        def names(self) -> list[str]:
            return []

    run = ScriptRun(None, NoTools(), [], Limits(30, 10_000, 10), threading.Event())  # type: ignore[arg-type]
    mark = "\x1e" + run.nonce + " "
    process = _ExitedBeforeItsOutputWasRead(
        f'{mark}{{"out": "refused: no\\n"}}\n{mark}{{"done": true, "dropped": 0, "error": null}}\n'
    )
    run._drive(process)  # type: ignore[arg-type]
    assert run.outcome.stopped is None and run._printed == ["refused: no\n"]
