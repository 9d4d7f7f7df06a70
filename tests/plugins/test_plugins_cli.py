"""`herald plugins ...` as a user runs it (real subprocesses on a temporary home): the
skeleton from `new` works in a real turn, a plugin's `herald <name>` command runs,
`herald --version` loads no plugin, and doctor names a broken one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from plugin_support import write_plugin

from herald.testing.fake_llm import Reply
from herald.testing.homes import fake_model_config, make_home


@pytest.fixture
def home(isolated_env: Path, fake_llm) -> Path:
    make_home(isolated_env, fake_model_config(fake_llm))
    return isolated_env


def herald(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "herald", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ),
        cwd=cwd,
    )


@pytest.mark.slow
def test_the_skeleton_works_end_to_end(home: Path, fake_llm, tmp_path: Path):
    made = herald("plugins", "new", "demo")
    assert made.returncode == 0, made.stderr
    assert (home / "plugins" / "demo" / "test_plugin.py").is_file()
    assert herald("plugins", "enable", "demo").returncode == 0
    config = yaml.safe_load((home / "config.yaml").read_text())
    assert config["plugins"]["enabled"] == ["demo"]
    listed = herald("plugins", "list")
    assert "demo" in listed.stdout and "loaded" in listed.stdout
    fake_llm.enqueue(Reply.tool_call("demo_echo", {"text": "hi", "times": 3}), Reply.text("echoed"))
    chat = herald("chat", "-q", "use the demo plugin", cwd=tmp_path)
    assert chat.returncode == 0, chat.stderr
    first, second = fake_llm.model_requests()
    assert "The demo plugin is installed" in first.messages[-1]["content"]
    assert [m for m in second.messages if m["role"] == "tool"][-1]["content"] == "hi hi hi"
    test = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_plugin.py"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=home / "plugins" / "demo",
    )
    assert test.returncode == 0, test.stdout + test.stderr
    assert herald("plugins", "remove", "demo", "--yes").returncode == 0
    assert not (home / "plugins" / "demo").exists()
    assert "demo" not in yaml.safe_load((home / "config.yaml").read_text())["plugins"]["enabled"]


COMMAND = """
from pathlib import Path

Path(__file__).with_name("imported").write_text("yes")

def greet(name: str = "world"):
    \"\"\"Say hello.\"\"\"
    print(f"hello {name} from a plugin")

def register(ctx):
    ctx.register_command("greet", greet, help="say hello")
"""


def test_a_plugin_command_and_lazy_loading(home: Path):
    path = write_plugin(home / "plugins", "greeter", COMMAND, provides=["commands"])
    assert herald("plugins", "enable", "greeter").returncode == 0
    (path / "imported").unlink()
    version = herald("--version")
    assert version.returncode == 0 and "herald" in version.stdout
    assert herald("sessions", "list").returncode == 0
    assert not (path / "imported").exists()  # neither imported the plugin
    greeted = herald("greet", "--name", "Ada")
    assert greeted.returncode == 0, greeted.stderr
    assert greeted.stdout.strip() == "hello Ada from a plugin"
    assert herald("nosuchcommand").returncode != 0


def test_doctor_and_list_name_a_broken_plugin(home: Path):
    write_plugin(home / "plugins", "broken", "import no_such_module_xyz\n")
    herald("plugins", "enable", "broken")
    doctor = herald("doctor", "--offline")
    assert "plugin broken" in doctor.stdout and "failed to import" in doctor.stdout
    listed = herald("plugins", "list")
    assert "failed" in listed.stdout and "ModuleNotFoundError" in listed.stdout
    info = herald("plugins", "info", "broken")
    assert "state:" in info.stdout and "no_such_module_xyz" in info.stdout
    disabled = herald("plugins", "disable", "broken")
    assert disabled.returncode == 0
    assert "plugin broken" not in herald("doctor", "--offline").stdout


SLASH = """
def register(ctx):
    ctx.register_slash_command("roll", lambda arg: f"rolled {arg or 'a 4'}", help="roll a die")
"""


@pytest.mark.slow
def test_a_plugin_slash_command_answers_in_the_repl(home: Path, fake_llm, tmp_path: Path):
    pexpect = pytest.importorskip("pexpect")
    write_plugin(home / "plugins", "dice", SLASH, provides=["slash_commands"])
    assert herald("plugins", "enable", "dice").returncode == 0
    child = pexpect.spawn(
        sys.executable,
        ["-m", "herald"],
        cwd=str(tmp_path),
        env={**os.environ, "TERM": "dumb", "PROMPT_TOOLKIT_NO_CPR": "1"},
        encoding="utf-8",
        timeout=20,
        dimensions=(40, 200),
    )
    try:
        child.expect("Herald — openai:fake-gpt")
        child.sendline("/help")
        child.expect("roll a die")
        child.sendline("/roll 2d6")
        child.expect("rolled 2d6")
        child.sendline("/exit")
        child.expect(pexpect.EOF)
    finally:
        if child.isalive():
            child.terminate(force=True)
    assert fake_llm.model_requests() == []  # answered by the plugin, no model call
