"""`herald chat -q TEXT --image PATH` as a real subprocess against the fake LLM server."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from PIL import Image

from herald.testing.fake_llm import Reply


def _sees_images(home: Path) -> None:
    config = yaml.safe_load((home / "config.yaml").read_text())
    config["vision"] = {"main": "on"}
    (home / "config.yaml").write_text(yaml.safe_dump(config))


def test_an_image_goes_with_the_question(herald_home, fake_llm, run_cli, tmp_path):
    _sees_images(herald_home)
    photo = tmp_path / "photo.jpg"
    Image.new("RGB", (3000, 1000), "green").save(photo, format="JPEG")
    fake_llm.enqueue(Reply.text("A green rectangle."))
    proc = run_cli("chat", "-q", "What is in the photo?", "--image", str(photo))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "A green rectangle.\n"
    (request,) = fake_llm.model_requests()
    content = request.body["messages"][-1]["content"]
    assert content[0] == {"type": "text", "text": "What is in the photo?"}
    assert content[1]["image_url"]["url"].startswith("data:image/jpeg;base64,")
    (stored,) = (herald_home / "images").iterdir()
    with Image.open(stored) as image:
        assert image.size == (1568, 523)  # fitted to vision.max_edge_px


def test_a_bad_image_is_refused_before_anything_is_sent(herald_home, fake_llm, run_cli, tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("hello")
    proc = run_cli("chat", "-q", "look", "--image", str(notes))
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert f"cannot attach {notes}" in proc.stderr and "not an image" in proc.stderr
    assert fake_llm.model_requests() == []


def test_image_without_a_query_says_how_to_attach_one(herald_home, run_cli, tmp_path):
    proc = run_cli("chat", "--image", str(tmp_path / "x.png"))
    assert proc.returncode != 0 and "/image PATH" in proc.stderr


WITHOUT_PILLOW = (
    "import sys\n"
    "sys.modules['PIL'] = None\n"
    "from herald.cli import main\n"
    "sys.argv = ['herald', *sys.argv[1:]]\n"
    "main()\n"
)


def test_without_the_vision_extra_the_error_names_it(herald_home, fake_llm, tmp_path):
    photo = tmp_path / "photo.png"
    Image.new("RGB", (10, 10)).save(photo)
    proc = subprocess.run(
        [sys.executable, "-c", WITHOUT_PILLOW, "chat", "-q", "look", "--image", str(photo)],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ),
    )
    assert proc.returncode != 0 and "pip install 'herald[vision]'" in proc.stderr
    assert "Traceback" not in proc.stderr and fake_llm.model_requests() == []


def test_the_repl_attaches_an_image_to_the_next_message(herald_home, fake_llm, tmp_path):
    pexpect = pytest.importorskip("pexpect")
    _sees_images(herald_home)
    _ = Image.new("RGB", (64, 48), "blue").save(tmp_path / "blue.png")
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
        index = child.expect(["Herald — openai:fake-gpt", pexpect.EOF])
        assert index == 0, child.before
        child.sendline("/image missing.png")
        child.expect("cannot attach missing.png")
        child.sendline("/image blue.png")
        child.expect(r"attached blue.png \(64×48\); it goes with your next message")
        fake_llm.enqueue(Reply.text("A blue image."), Reply.text("Plain text now."))
        child.sendline("what colour?")
        child.expect("A blue image.")
        child.sendline("and this?")
        child.expect("Plain text now.")
        child.sendline("/exit")
        child.expect(pexpect.EOF)
    finally:
        if child.isalive():
            child.terminate(force=True)
    first, second = fake_llm.model_requests()
    assert first.body["messages"][-1]["content"][1]["type"] == "image_url"
    # The image stays on its own message in the next request, not on the new one.
    assert second.body["messages"][-1] == {"role": "user", "content": "and this?"}
    assert second.body["messages"][1] == first.body["messages"][1]
