"""`herald chat -q` against servers that are down or unknown (real subprocesses)."""

from __future__ import annotations

import json
import socket

from herald.testing.fake_llm import Reply
from herald.testing.homes import fake_model_config, make_home, merge


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_server_that_is_down_is_named_in_the_error(isolated_env, fake_llm, run_cli):
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    config = {"model": {"provider": "custom", "base_url": url}, "agent": {"max_retries": 1}}
    make_home(isolated_env, merge(fake_model_config(fake_llm), config))
    proc = run_cli("chat", "-q", "hi")
    assert proc.returncode == 1
    assert url in proc.stderr
    assert "Traceback" not in proc.stderr


def test_the_unknown_context_window_notice_is_shown_once_per_session(
    isolated_env, fake_llm, run_cli
):
    config = {"model": {"provider": "custom", "name": "mystery-model-7"}}
    make_home(isolated_env, merge(fake_model_config(fake_llm), config))
    fake_llm.enqueue(Reply.tool_call("todo", {"todos": []}), Reply.text("one"), Reply.text("two"))
    first = run_cli("chat", "-q", "first", "--json")
    assert first.returncode == 0, first.stderr
    assert first.stderr.count("context window of 'mystery-model-7' is unknown") == 1
    session = json.loads(first.stdout)["session_id"]
    again = run_cli("chat", "-q", "second", "--resume", session)
    assert again.returncode == 0, again.stderr
    assert "is unknown" not in again.stderr
