"""Script files and the ``python -m herald.testing.fake_llm`` entry point."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import openai
import pytest

from herald.testing.fake_llm import FakeUsage, Fault, Reply, ScriptError, ToolCallSpec, load_script

YAML_SCRIPT = """\
- text: "Hello!"
  chunk_size: 2
- tool_calls:
    - name: todo
      arguments: {todos: [{text: "write tests"}]}
    - {name: read_file, arguments: '{"path": ', id: call_custom}
  text: "Working on it."
- reasoning: "Think first."
  text: "Thought."
  usage: {prompt_tokens: 10, completion_tokens: 5, cache_read_tokens: 4}
- {fault: status, status: 429, message: "slow down", retry_after: 2}
- {fault: context_overflow, limit: 1000}
- {fault: timeout, seconds: 1.5}
- {fault: drop_mid_stream, after_chunks: 1}
- {fault: malformed_json}
- {fault: empty_choices}
- {fault: refuse_stream}
- {fault: close_connection}
- {fault: content_policy}
"""


def test_load_yaml_script_covers_every_item_kind(tmp_path: Path) -> None:
    path = tmp_path / "script.yaml"
    path.write_text(YAML_SCRIPT)

    items = load_script(path)

    assert items[0] == Reply.text("Hello!", chunk_size=2)
    assert items[1] == Reply.tool_calls(
        [
            ToolCallSpec("todo", {"todos": [{"text": "write tests"}]}),
            ToolCallSpec("read_file", '{"path": ', "call_custom"),
        ],
        text="Working on it.",
    )
    assert items[2] == Reply(
        text="Thought.", reasoning="Think first.", usage=FakeUsage(10, 5, cache_read_tokens=4)
    )
    assert items[3] == Fault.status(429, "slow down", retry_after=2)
    assert items[4] == Fault.context_overflow(limit=1000)
    assert items[5] == Fault.timeout(1.5)
    assert items[6] == Fault.drop_mid_stream(after_chunks=1)
    assert [item.kind for item in items[7:]] == [  # type: ignore[union-attr]
        "malformed_json",
        "empty_choices",
        "refuse_stream",
        "close_connection",
        "content_policy",
    ]


def test_load_json_script(tmp_path: Path) -> None:
    path = tmp_path / "script.json"
    path.write_text(json.dumps([{"text": "hi"}, {"fault": "status", "status": 500}]))

    assert load_script(path) == [Reply.text("hi"), Fault.status(500)]


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('{"text": "not a list"}', "a script is a list"),
        ('[{"txt": "typo"}]', "item 1: unknown reply keys ['txt']"),
        ('[{"text": "ok"}, {"fault": "explode"}]', "item 2: unknown fault 'explode'"),
        ('[{"fault": "status"}]', "needs a 'status' code"),
        ('[{"fault": "timeout", "secs": 3}]', "does not take ['secs']"),
        ('[{"tool_calls": [{"arguments": {}}]}]', "needs 'name'"),
        ("[{", "not valid JSON"),
    ],
)
def test_bad_scripts_say_what_is_wrong(tmp_path: Path, content: str, expected: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)

    with pytest.raises(ScriptError) as caught:
        load_script(path)

    assert expected in str(caught.value)
    assert str(path) in str(caught.value)


def test_module_entry_point_serves_a_script(tmp_path: Path) -> None:
    script = tmp_path / "script.yaml"
    script.write_text(
        '- text: "scripted answer"\n'
        "- tool_calls: [{name: todo, arguments: {todos: []}}]\n"
        "- {fault: status, status: 503}\n"
    )
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "herald.testing.fake_llm",
            "--port",
            "0",
            "--script",
            str(script),
            "--default-text",
            "script exhausted",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        client = openai.OpenAI(base_url=url + "/v1", api_key="test", max_retries=0, timeout=5)
        with client:
            messages = [{"role": "user", "content": "go"}]
            first = client.chat.completions.create(model="m", messages=messages)  # type: ignore[arg-type]
            second = client.chat.completions.create(model="m", messages=messages)  # type: ignore[arg-type]
            with pytest.raises(openai.InternalServerError):
                client.chat.completions.create(model="m", messages=messages)  # type: ignore[arg-type]
            fourth = client.chat.completions.create(model="m", messages=messages)  # type: ignore[arg-type]
    finally:
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=10)

    assert first.choices[0].message.content == "scripted answer"
    assert second.choices[0].message.tool_calls is not None
    assert json.loads(second.choices[0].message.tool_calls[0].function.arguments) == {"todos": []}
    assert fourth.choices[0].message.content == "script exhausted"
    assert process.returncode == 0, stderr


def test_module_entry_point_rejects_a_bad_script(tmp_path: Path) -> None:
    script = tmp_path / "bad.yaml"
    script.write_text("- {fault: nonsense}\n")

    done = subprocess.run(
        [sys.executable, "-m", "herald.testing.fake_llm", "--script", str(script)],
        capture_output=True,
        text=True,
        timeout=30,
    )

    assert done.returncode == 2
    assert done.stdout == ""
    assert "unknown fault 'nonsense'" in done.stderr
