"""`herald config`, `herald sessions` and `herald doctor`."""

from __future__ import annotations

import json

import yaml

from herald.testing.fake_llm import Reply


def test_config_path_show_set(herald_home, run_cli):
    assert run_cli("config", "path").stdout.strip() == str(herald_home / "config.yaml")
    proc = run_cli("config", "set", "agent.max_iterations", "7")
    assert proc.returncode == 0, proc.stderr
    shown = yaml.safe_load(run_cli("config", "show").stdout)
    assert shown["agent"]["max_iterations"] == 7
    assert shown["model"]["name"] == "fake-gpt"


def test_config_set_rejects_bad_values(herald_home, run_cli):
    proc = run_cli("config", "set", "model.temperature", "9")
    assert proc.returncode == 2
    assert "model.temperature" in proc.stderr and "less than or equal to 2" in proc.stderr
    proc = run_cli("config", "set", "modle.name", "x")
    assert proc.returncode == 2 and "unknown key" in proc.stderr


def test_sessions_list_show_export(herald_home, fake_llm, run_cli, tmp_path):
    fake_llm.enqueue(Reply.tool_call("todo", {"todos": []}), Reply.text("All done."))
    sid = json.loads(run_cli("chat", "-q", "Plan the day", "--json").stdout)["session_id"]

    listing = run_cli("sessions", "list").stdout
    assert sid in listing and "Plan the day" in listing

    shown = run_cli("sessions", "show", sid[:12]).stdout
    assert "cache hit ratio" in shown and "All done." in shown and "→ calls todo" in shown

    data = json.loads(run_cli("sessions", "export", sid, "--format", "json").stdout)
    assert data["session"]["id"] == sid
    assert [m["role"] for m in data["messages"]] == ["user", "assistant", "tool", "assistant"]

    out = tmp_path / "s.md"
    run_cli("sessions", "export", sid, "--format", "md", "-o", str(out))
    md = out.read_text()
    assert md.startswith("# Plan the day") and "## Assistant" in md and "Tool call `todo`" in md

    bad = run_cli("sessions", "export", sid, "--format", "pdf")
    assert bad.returncode == 2 and "json" in bad.stderr


def test_doctor_reaches_the_fake_provider(herald_home, fake_llm, run_cli):
    proc = run_cli("doctor")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "✓ config" in proc.stdout and "✓ reachability" in proc.stdout
    assert len(fake_llm.requests) == 1  # exactly one request


def test_doctor_reports_unreachable_provider_with_a_fix(herald_home, run_cli):
    run_cli("config", "set", "model.base_url", "http://127.0.0.1:9/v1")
    proc = run_cli("doctor")
    assert proc.returncode == 1
    assert "✗ reachability" in proc.stdout and "fix:" in proc.stdout


def test_setup_writes_config_and_env(herald_home, run_cli):
    proc = run_cli(
        "setup",
        "--provider",
        "anthropic",
        "--model",
        "claude-x",
        "--api-key",
        "-",
        input="sk-ant-from-stdin\n",
    )
    assert proc.returncode == 0, proc.stderr
    config = yaml.safe_load((herald_home / "config.yaml").read_text())
    assert config["model"]["provider"] == "anthropic" and config["model"]["name"] == "claude-x"
    assert "base_url" not in config["model"]  # the fake server URL no longer applies
    env = (herald_home / ".env").read_text()
    assert "ANTHROPIC_API_KEY=sk-ant-from-stdin" in env
    assert "OPENAI_API_KEY=sk-test-key" in env  # other secrets kept
    assert oct((herald_home / ".env").stat().st_mode & 0o777) == "0o600"
    assert "sk-ant-from-stdin" not in proc.stderr


def test_setup_custom_needs_a_base_url(herald_home, run_cli):
    proc = run_cli("setup", "--provider", "custom", "--model", "m")
    assert proc.returncode == 2 and "--base-url" in proc.stderr
