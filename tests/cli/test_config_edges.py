"""`config.yaml` and `herald config set` as a user meets them."""

from __future__ import annotations

import pytest

from herald.config import ConfigError, load_config


@pytest.fixture
def home(isolated_env):
    isolated_env.mkdir(parents=True, exist_ok=True)
    return isolated_env


def test_approvals_mode_off_as_the_readme_writes_it(home, run_cli):
    (home / "config.yaml").write_text("approvals:\n  mode: off\n")
    assert load_config(home / "config.yaml").approvals.mode == "off"
    proc = run_cli("config", "set", "approvals.mode", "off")
    assert proc.returncode == 0, proc.stderr
    assert load_config(home / "config.yaml").approvals.mode == "off"


def test_config_set_takes_a_negative_number_without_double_dash(home, run_cli):
    proc = run_cli("config", "set", "agent.max_turns", "-5")
    assert "No such option" not in proc.stderr
    # -5 reaches validation, which names the key and the rule (max_turns must be positive)
    assert "agent.max_turns" in proc.stderr and "-5" in proc.stderr
    proc = run_cli("config", "set", "memory.session_search.max_results", "-5")
    assert "No such option" not in proc.stderr


def test_a_refused_config_set_says_the_file_was_not_changed(home, run_cli):
    (home / "config.yaml").write_text("agent:\n  max_turns: 7\n")
    before = (home / "config.yaml").read_text()
    proc = run_cli("config", "set", "model", "5")
    assert proc.returncode != 0
    assert "Fix the file" not in proc.stderr
    assert "ModelConfig" not in proc.stderr and "instance of" not in proc.stderr
    assert "not changed" in proc.stderr
    assert "model" in proc.stderr and "section" in proc.stderr
    assert (home / "config.yaml").read_text() == before


def test_a_duplicate_key_is_rejected_naming_its_line(home):
    path = home / "config.yaml"
    path.write_text("model:\n  name: a\nagent:\n  max_turns: 3\nmodel:\n  name: b\n")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    message = str(caught.value)
    assert "duplicate key 'model'" in message
    assert "line 5" in message and "line 1" in message


def test_a_nested_duplicate_key_is_rejected_too(home):
    path = home / "config.yaml"
    path.write_text("agent:\n  max_turns: 3\n  max_turns: 4\n")
    with pytest.raises(ConfigError, match=r"duplicate key 'max_turns'.*line 3"):
        load_config(path)
