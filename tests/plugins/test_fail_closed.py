"""Plugin guards fail closed (issue 26, part C): a ``pre_tool_call`` hook that raises or
runs out of time refuses the call and names its plugin; a ``register()`` that hangs
disables that plugin (with the reason in ``herald plugins list``) instead of hanging
start-up; ``ctx.storage_file`` never leads outside the plugin's folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from plugin_support import write_plugin

from herald.plugins import Hook, HookRunner, PluginStorageError
from herald.plugins.registration import PluginContext
from herald.testing.fake_llm import Reply
from herald.testing.homes import fake_model_config, make_home, merge

GUARDS_RAISE = """
def guard(name, args):
    if "m1" in str(args):
        raise RuntimeError("policy backend unreachable")
    return None

def register(ctx):
    ctx.register_hook("pre_tool_call", guard)
"""

GUARDS_HANG = """
import time

def guard(name, args):
    if "m2" in str(args):
        time.sleep(5)
        return "too late to matter"
    return None

def register(ctx):
    ctx.register_hook("pre_tool_call", guard)
"""

HANGS_IN_REGISTER = """
import time

def register(ctx):
    time.sleep(120)
"""


def herald(*args: str, cwd: Path | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "400"}  # the plugins table unwrapped
    return subprocess.run([sys.executable, "-m", "herald", *args], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=cwd)  # fmt: skip


def _home(isolated_env: Path, fake_llm, plugins: dict) -> Path:
    # `touch *` is the owner's unattended allow pattern: the refusals below are the
    # plugins' hooks, not the unattended allowlist.
    extra = {"plugins": plugins, "approvals": {"unattended_allow": ["touch *"]}}
    make_home(isolated_env, merge(fake_model_config(fake_llm), extra))
    return isolated_env


@pytest.mark.slow
def test_a_guard_that_raises_or_hangs_refuses_the_command(isolated_env, fake_llm, tmp_path):
    home = _home(isolated_env, fake_llm, {"enabled": ["raiser", "sleeper"],
                                          "hook_timeout_seconds": 0.5})  # fmt: skip
    write_plugin(home / "plugins", "raiser", GUARDS_RAISE)
    write_plugin(home / "plugins", "sleeper", GUARDS_HANG)
    work = tmp_path / "work"
    work.mkdir()
    fake_llm.enqueue(
        Reply.tool_call("terminal", {"command": "touch m1"}),
        Reply.tool_call("terminal", {"command": "touch m2"}),
        Reply.tool_call("terminal", {"command": "touch m3"}),  # the guards let this one by
        Reply.text("done"),
    )
    chat = herald("chat", "-q", "make the markers", cwd=work)
    assert chat.returncode == 0, chat.stderr
    results = [m["content"] for m in fake_llm.model_requests()[-1].messages
               if m["role"] == "tool"]  # fmt: skip
    assert not (work / "m1").exists() and not (work / "m2").exists()
    assert (work / "m3").exists()  # commands do run here: the refusals above are the hooks'
    assert "refused by plugin 'raiser'" in results[0] and "fail closed" in results[0]
    assert "policy backend unreachable" in results[0]
    assert (
        "refused by plugin 'sleeper'" in results[1] and "did not answer within 0.5 s" in results[1]
    )
    assert "herald plugins disable sleeper" in results[1]


@pytest.mark.slow
def test_a_register_that_hangs_disables_the_plugin_not_herald(isolated_env, fake_llm, tmp_path):
    home = _home(isolated_env, fake_llm, {"enabled": ["hang"], "register_timeout_seconds": 1})
    write_plugin(home / "plugins", "hang", HANGS_IN_REGISTER)
    fake_llm.enqueue(Reply.text("still here"))
    started = time.monotonic()
    chat = herald("chat", "-q", "hello", cwd=tmp_path, timeout=30)
    took = time.monotonic() - started
    assert chat.returncode == 0, chat.stderr
    assert chat.stdout == "still here\n"
    assert took < 1 + 8, took  # the limit plus start-up, not the plugin's two minutes
    listed = herald("plugins", "list", timeout=30)
    assert listed.returncode == 0, listed.stderr
    flat = " ".join(listed.stdout.split())
    assert "register(ctx) did not finish within 1 s" in flat, listed.stdout


def test_the_runner_refuses_when_a_guard_cannot_answer():
    def boom(name):
        raise ValueError("bad config")

    def slow(name):
        time.sleep(2)

    for hook, words in ((Hook("pre_tool_call", boom, "strict"), "raised ValueError: bad config"),
                        (Hook("pre_tool_call", slow, "lazy"), "did not answer within 0.2 s")):  # fmt: skip
        notes: list[str] = []
        denial = HookRunner((hook,), timeout=0.2).tool_denial("terminal", {}, notes.append)
        assert denial is not None and f"refused by plugin {hook.plugin!r}" in denial
        assert words in denial and "fail closed" in denial
        assert notes and "the tool call was refused" in notes[0]
    # an observer of another event still only gets skipped
    runner = HookRunner((Hook("pre_llm_call", boom, "obs"),), timeout=0.2)
    assert runner.context_for(user_text="x") == []


def _ctx(tmp_path: Path) -> PluginContext:
    return PluginContext("notes", storage_root=tmp_path / "plugins" / ".data", config={},
                         secrets=None, hook_order=lambda: 0)  # fmt: skip


def test_storage_names_stay_inside_the_plugins_folder(tmp_path):
    ctx = _ctx(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    ok = ctx.storage_file("daily/2026-12-01.md")
    ok.write_text("fine")
    assert ok.is_relative_to(ctx.storage) and ok.parent.is_dir()
    for bad in ("../../outside/x", "/etc/passwd", "a/../../b", "", "~/.ssh/authorized_keys/.."):
        with pytest.raises(PluginStorageError):
            ctx.storage_file(bad)
    os.symlink(outside, ctx.storage / "link")
    os.symlink(outside / "file", ctx.storage / "file-link")
    for bad in ("link/x", "link/new/deeper/x", "file-link"):
        with pytest.raises(PluginStorageError, match="symlink"):
            ctx.storage_file(bad)
    assert list(outside.iterdir()) == []  # no folder was made out there on the way


def test_a_symlinked_storage_folder_is_refused(tmp_path):
    ctx = _ctx(tmp_path)
    ssh = tmp_path / "ssh"
    ssh.mkdir()
    root = tmp_path / "plugins" / ".data"
    root.mkdir(parents=True)
    os.symlink(ssh, root / "notes")
    with pytest.raises(PluginStorageError, match="is a symlink"):
        _ = ctx.storage
    with pytest.raises(PluginStorageError):
        ctx.storage_file("authorized_keys")
    assert json.dumps(list(os.listdir(ssh))) == "[]"
