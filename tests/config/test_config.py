"""config.yaml validation, editing, the home layout, profiles and the secrets accessor."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from herald.config import (
    ConfigError,
    HeraldConfig,
    ProfileNameError,
    Secrets,
    load_config,
    resolve_home,
    set_value,
)


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_missing_file_gives_defaults(tmp_path):
    config = load_config(tmp_path / "config.yaml")
    assert config == HeraldConfig()
    assert config.agent.max_iterations == 90
    assert config.model.stream is True


def test_wrong_type_names_file_key_expected_and_found(tmp_path):
    path = write(tmp_path / "config.yaml", "model:\n  temperature: hot\n")
    with pytest.raises(ConfigError) as err:
        load_config(path)
    message = str(err.value)
    assert str(path) in message
    assert "model.temperature" in message
    assert "expected" in message and "number" in message
    assert "'hot'" in message and "(str)" in message
    assert "Traceback" not in message


def test_out_of_range_value(tmp_path):
    path = write(tmp_path / "config.yaml", "agent:\n  max_iterations: 0\n")
    with pytest.raises(
        ConfigError, match=r"agent\.max_iterations: expected .*greater than or equal to 1, found 0"
    ):
        load_config(path)


def test_unknown_key_suggests_the_right_one(tmp_path):
    path = write(tmp_path / "config.yaml", "model:\n  nmae: gpt\n")
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert "model.nmae: unknown key" in str(err.value)
    assert "did you mean 'model.name'" in str(err.value)


def test_bad_provider_lists_the_choices(tmp_path):
    path = write(tmp_path / "config.yaml", "model:\n  provider: openia\n")
    with pytest.raises(ConfigError, match=r"model\.provider: expected 'openai', 'anthropic'"):
        load_config(path)


def test_yaml_syntax_error_names_line(tmp_path):
    path = write(tmp_path / "config.yaml", "model:\n  name: [unclosed\n")
    with pytest.raises(ConfigError, match=r"at line \d+, column \d+: not valid YAML"):
        load_config(path)


def test_top_level_must_be_a_mapping(tmp_path):
    path = write(tmp_path / "config.yaml", "- a\n- b\n")
    with pytest.raises(ConfigError, match="expected a mapping"):
        load_config(path)


def test_set_value_validates_before_writing(tmp_path):
    path = tmp_path / "config.yaml"
    set_value(path, "model.name", "gpt-test")
    set_value(path, "agent.max_iterations", "12")
    set_value(path, "model.stream", "false")
    config = load_config(path)
    assert (config.model.name, config.agent.max_iterations, config.model.stream) == (
        "gpt-test",
        12,
        False,
    )
    before = path.read_text()
    with pytest.raises(ConfigError, match=r"agent\.max_iterations"):
        set_value(path, "agent.max_iterations", "-3")
    with pytest.raises(ConfigError, match="unknown key"):
        set_value(path, "agent.max_turnz", "3")
    assert path.read_text() == before  # nothing half-written


def test_home_layout_is_created(tmp_path, monkeypatch):
    monkeypatch.setenv("HERALD_HOME", str(tmp_path / "h"))
    home = resolve_home()
    for name in ("memories", "skills", "plugins", "cron", "logs", "cache", "profiles"):
        assert (home.root / name).is_dir()
    assert (home.memories_dir / "MEMORY.md").exists() and (home.user_memory_file()).exists()
    assert home.root == tmp_path / "h"
    assert oct(os.stat(home.root).st_mode & 0o777) == "0o700"


def test_profiles_are_separate_homes(tmp_path, monkeypatch):
    monkeypatch.setenv("HERALD_HOME", str(tmp_path / "h"))
    work = resolve_home("work")
    assert work.root == tmp_path / "h" / "profiles" / "work"
    assert work.state_db != resolve_home().state_db
    monkeypatch.setenv("HERALD_PROFILE", "play")
    assert resolve_home().root.name == "play"
    assert resolve_home("default").root == tmp_path / "h"


@pytest.mark.parametrize("bad", ["../escape", "a/b", "", ".hidden", "x" * 65, "..", "a b"])
def test_profile_names_cannot_escape_the_home(bad):
    with pytest.raises(ProfileNameError):
        resolve_home(bad, create=False)


def test_secrets_env_file_and_environment(tmp_path):
    env_file = write(tmp_path / ".env", "OPENAI_API_KEY=sk-file\nOTHER_TOKEN=tok-123456\nEMPTY=\n")
    secrets = Secrets(env_file, environ={"OPENAI_API_KEY": "sk-env", "PATH": "/usr/bin"})
    assert secrets.get("OPENAI_API_KEY") == "sk-env"  # the environment wins
    assert secrets.get("OTHER_TOKEN") == "tok-123456"
    assert secrets.get("EMPTY") is None
    assert "PATH" not in secrets.secret_names()
    assert set(secrets.secret_values()) >= {"sk-env", "tok-123456"}


def test_secrets_are_not_exported_to_the_process_environment(tmp_path):
    env_file = write(tmp_path / ".env", "HERALD_TEST_ONLY_SECRET=abcdef123\n")
    Secrets(env_file).get("HERALD_TEST_ONLY_SECRET")
    assert "HERALD_TEST_ONLY_SECRET" not in os.environ


def test_numbered_keys_for_the_pool(tmp_path):
    env_file = write(
        tmp_path / ".env",
        "OPENAI_API_KEY=k1\nOPENAI_API_KEY_2=k2\nOPENAI_API_KEYS=k3, k1 ,k4\n",
    )
    assert Secrets(env_file, environ={}).numbered("OPENAI_API_KEY") == ["k1", "k2", "k3", "k4"]


def test_require_names_the_variable_and_the_file(tmp_path):
    from herald.config import MissingSecretError

    secrets = Secrets(tmp_path / ".env", environ={})
    with pytest.raises(MissingSecretError, match=r"ANTHROPIC_API_KEY is not set.*\.env"):
        secrets.require("ANTHROPIC_API_KEY")


def _env_reads(tree) -> list[str]:
    """Names read through os.environ[...], os.environ.get(...) or os.getenv(...)."""
    import ast

    names = []
    for node in ast.walk(tree):
        target = None
        if isinstance(node, ast.Subscript):
            target, arg = node.value, node.slice
        elif isinstance(node, ast.Call) and node.args:
            target, arg = node.func, node.args[0]
        if target is None or not isinstance(arg, ast.Constant) or not isinstance(arg.value, str):
            continue
        text = ast.unparse(target)
        if text in ("os.environ", "os.environ.get", "os.getenv", "environ.get", "getenv"):
            names.append(arg.value)
    return names


def test_only_the_secrets_module_reads_secret_env_vars():
    """Invariant 10: one accessor. No other module reads os.environ / os.getenv for a
    value that looks like a secret."""
    import ast
    import re

    root = Path(__file__).resolve().parents[2] / "src" / "herald"
    offenders = []
    for path in root.rglob("*.py"):
        if path.name == "secrets.py" and path.parent.name == "config":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for name in _env_reads(tree):
            if re.search(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD", name, re.IGNORECASE):
                offenders.append(f"{path.relative_to(root)}: {name}")
    assert offenders == []


def test_the_env_read_detector_finds_real_reads():
    import ast

    code = "import os\na = os.environ['OPENAI_API_KEY']\nb = os.getenv('X_TOKEN')\n'os.environ[\"Y_KEY\"]'"
    assert _env_reads(ast.parse(code)) == ["OPENAI_API_KEY", "X_TOKEN"]


def test_the_old_max_turns_key_still_works_with_a_deprecation_notice(tmp_path, caplog):
    path = write(tmp_path / "config.yaml", "agent:\n  max_turns: 7\n")
    with caplog.at_level("WARNING", logger="herald.config"):
        config = load_config(path)
    assert config.agent.max_iterations == 7
    assert "agent.max_turns is deprecated" in caplog.text
    assert "agent.max_iterations" in caplog.text


def test_the_old_cron_and_kanban_keys_still_work(tmp_path, caplog):
    path = write(
        tmp_path / "config.yaml", "cron:\n  max_turns: 5\nkanban:\n  worker_max_turns: 6\n"
    )
    with caplog.at_level("WARNING", logger="herald.config"):
        config = load_config(path)
    assert (config.cron.max_iterations, config.kanban.worker_max_iterations) == (5, 6)
    assert "cron.max_turns is deprecated; rename it to cron.max_iterations" in caplog.text
    assert "kanban.worker_max_turns is deprecated" in caplog.text
