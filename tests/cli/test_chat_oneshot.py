"""`herald chat -q` as a real subprocess against the fake LLM server."""

from __future__ import annotations

import json
import subprocess
import sys

from herald.state import StateStore
from herald.testing.fake_llm import Fault, Reply


def test_prints_only_the_answer_on_stdout(herald_home, fake_llm, run_cli):
    fake_llm.enqueue(Reply.tool_call("todo", {"todos": []}), Reply.text("Hello from Herald."))
    proc = run_cli("chat", "-q", "Say hello")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "Hello from Herald.\n"
    assert "running todo" in proc.stderr
    with StateStore(herald_home / "state.db") as store:
        (session,) = store.list_sessions()
        assert session.last_exit_reason == "text_response"
        assert len(store.get_messages(session.id)) == 4


def test_json_output_and_resume(herald_home, fake_llm, run_cli):
    fake_llm.enqueue(Reply.text("first"), Reply.text("second"))
    first = json.loads(run_cli("chat", "-q", "one", "--json").stdout)
    assert first["exit_reason"] == "text_response" and first["completed"] is True
    assert first["final_text"] == "first" and first["api_calls"] == 1
    assert first["usage"]["prompt_tokens"] > 0
    proc = run_cli("chat", "-q", "two", "--resume", first["session_id"][:15])
    assert proc.returncode == 0 and proc.stdout == "second\n"
    second_request = fake_llm.model_requests()[1]
    assert [m["content"] for m in second_request.messages if m["role"] == "user"] == ["one", "two"]


def test_failed_turn_exits_nonzero_with_reason_on_stderr(herald_home, fake_llm, run_cli):
    fake_llm.enqueue(Fault.status(401, "Incorrect API key provided: sk-test-key"))
    proc = run_cli("chat", "-q", "hi")
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert "auth_failed" in proc.stderr  # the classified reason, not all_retries_exhausted
    assert "Incorrect API key provided" in proc.stderr  # the provider's own words
    assert "sk-test-key" not in proc.stderr  # redacted
    assert "Traceback" not in proc.stderr


def test_unknown_resume_session_is_a_clear_error(herald_home, run_cli):
    proc = run_cli("chat", "-q", "hi", "--resume", "nope")
    assert proc.returncode == 2
    assert "nope" in proc.stderr and "Traceback" not in proc.stderr


def test_max_turns_limits_the_turn(herald_home, fake_llm, run_cli):
    fake_llm.set_handler(
        lambda r: Reply.tool_call("todo", {"todos": []}) if r.tools else Reply.text("summary")
    )
    proc = run_cli("chat", "-q", "loop", "--max-iterations", "2", "--json")
    data = json.loads(proc.stdout)
    assert proc.returncode == 1
    assert data["exit_reason"] == "max_iterations_reached"
    assert data["final_text"] == "summary" and data["api_calls"] == 3


def test_bad_config_is_one_clear_message(herald_home, run_cli):
    (herald_home / "config.yaml").write_text("model:\n  max_tokens: lots\n")
    proc = run_cli("chat", "-q", "hi")
    assert proc.returncode == 2
    assert "config error in" in proc.stderr and "model.max_tokens" in proc.stderr
    assert "'lots'" in proc.stderr and "Traceback" not in proc.stderr


def test_version_is_fast_and_imports_no_sdk():
    code = (
        "import sys; sys.argv = ['herald', '--version']\n"
        "from herald.cli import main; main()\n"
        "heavy = [m for m in sys.modules if m.split('.')[0] in "
        "('openai', 'anthropic', 'httpx', 'httpx2', 'typer', 'rich', 'pydantic', 'llama_cpp')]\n"
        "print(heavy)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("herald ")
    assert lines[1] == "[]"


def test_profile_flag_uses_a_separate_home(herald_home, fake_llm, run_cli):
    from herald.testing.homes import fake_model_config, make_home

    make_home(herald_home / "profiles" / "work", fake_model_config(fake_llm))
    fake_llm.enqueue(Reply.text("from work"))
    proc = run_cli("--profile", "work", "chat", "-q", "hi")
    assert proc.returncode == 0, proc.stderr
    assert (herald_home / "profiles" / "work" / "state.db").exists()
    assert not (herald_home / "state.db").exists()


def test_without_a_terminal_dangerous_commands_are_denied(herald_home, fake_llm, tmp_path):
    """No human to ask (stdin is not a TTY): the unattended default denies."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "victim.txt").write_text("keep me")
    fake_llm.enqueue(
        Reply.tool_call("terminal", {"command": "rm -rf victim.txt"}), Reply.text("ok")
    )
    proc = subprocess.run(
        [sys.executable, "-m", "herald", "chat", "-q", "clean"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=work,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stderr
    assert (work / "victim.txt").read_text() == "keep me"
    result = next(m for m in fake_llm.model_requests()[-1].messages if m["role"] == "tool")
    assert "denied" in result["content"] or "no one" in result["content"].lower()
