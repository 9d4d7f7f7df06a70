"""Voice notes in and spoken replies out: `herald chat --audio NOTE` as a real subprocess
against the fake server's /v1/audio/transcriptions and /v1/audio/speech."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from herald.config import HeraldConfig, Secrets
from herald.providers.voice import VoiceUnavailable, speak, transcribe
from herald.testing.fake_llm import Reply
from herald.testing.homes import fake_model_config


def _configure(home: Path, **voice: object) -> None:
    config = yaml.safe_load((home / "config.yaml").read_text())
    config["voice"] = voice
    (home / "config.yaml").write_text(yaml.safe_dump(config))


def _note(tmp_path: Path) -> Path:
    note = tmp_path / "note.ogg"
    note.write_bytes(b"OggS" + b"\x00" * 200)
    return note


def test_a_voice_note_becomes_the_message_and_the_reply_is_spoken(
    herald_home, fake_llm, run_cli, tmp_path
):
    fake_llm.audio.transcript = "remind me what the capital of France is"
    fake_llm.enqueue(Reply.text("Paris."))
    out = tmp_path / "reply.mp3"
    proc = run_cli("chat", "--audio", str(_note(tmp_path)), "--speech-out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "Paris.\n"
    assert "remind me what the capital of France is" in proc.stderr  # the user sees it
    (request,) = fake_llm.model_requests()
    assert request.body["messages"][-1]["content"] == "remind me what the capital of France is"
    transcription, speech = fake_llm.audio_requests()
    assert transcription.path == "/v1/audio/transcriptions"
    assert b"gpt-4o-mini-transcribe" in transcription.raw and b"OggS" in transcription.raw
    assert speech.body["input"] == "Paris." and speech.body["voice"] == "alloy"
    assert out.read_bytes() == fake_llm.audio.speech
    assert f"spoken reply: {out}" in proc.stderr


def test_voice_reply_never_and_always(herald_home, fake_llm, run_cli, tmp_path):
    _configure(herald_home, reply="never")
    fake_llm.enqueue(Reply.text("ok"), Reply.text("ok again"))
    proc = run_cli("chat", "--audio", str(_note(tmp_path)))
    assert proc.returncode == 0 and "spoken reply" not in proc.stderr
    assert [r.path for r in fake_llm.audio_requests()] == ["/v1/audio/transcriptions"]
    _configure(herald_home, reply="always")
    proc = run_cli("chat", "-q", "typed, not spoken")
    assert proc.returncode == 0 and "spoken reply:" in proc.stderr
    assert fake_llm.audio_requests()[-1].path == "/v1/audio/speech"
    (spoken,) = (herald_home / "cache" / "voice").iterdir()
    assert spoken.suffix == ".mp3"


def test_a_provider_without_audio_endpoints_gets_a_clear_message(
    herald_home, fake_llm, run_cli, tmp_path
):
    fake_llm.audio.enabled = False
    proc = run_cli("chat", "--audio", str(_note(tmp_path)))
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert "has no /audio/transcriptions endpoint" in proc.stderr
    assert "voice.base_url" in proc.stderr
    assert fake_llm.model_requests() == []


def test_an_anthropic_model_needs_a_voice_server(fake_llm, tmp_path):
    config = HeraldConfig.model_validate(fake_model_config(fake_llm, "anthropic"))
    secrets = Secrets(None, environ={"ANTHROPIC_API_KEY": "sk-ant-test"})
    with pytest.raises(VoiceUnavailable, match="anthropic provider has no speech endpoints"):
        transcribe(config, secrets, _note(tmp_path))
    config.voice.base_url = fake_llm.openai_base_url
    assert transcribe(config, secrets, _note(tmp_path)) == "hello from a voice note"
    assert speak(config, secrets, "hi") == fake_llm.audio.speech


def test_a_failed_spoken_reply_keeps_the_written_one(herald_home, fake_llm, run_cli, tmp_path):
    _configure(herald_home, reply="always")
    fake_llm.audio.enabled = False
    fake_llm.enqueue(Reply.text("written answer"))
    proc = run_cli("chat", "-q", "hi")
    assert proc.returncode == 0 and proc.stdout == "written answer\n"
    assert "the reply was not spoken" in proc.stderr and "/audio/speech" in proc.stderr
