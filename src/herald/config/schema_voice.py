"""Config section for voice (`voice.*`): voice notes transcribed to text, replies spoken
back, through an OpenAI-compatible provider's ``/v1/audio/transcriptions`` and
``/v1/audio/speech``."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from herald.config.strict import StrictModel


class VoiceConfig(StrictModel):
    reply: Literal["auto", "never", "always"] = Field(
        "auto",
        description="speak replies: auto = when the message was a voice note; never; always",
    )
    base_url: str | None = Field(
        None,
        description="OpenAI-compatible server with the audio endpoints; unset = the main "
        "model's, when it speaks the OpenAI API",
    )
    api_key_env: str | None = Field(
        None, description="secret holding that server's key; unset = the main model's"
    )
    transcription_model: str = Field("gpt-4o-mini-transcribe", description="speech to text")
    speech_model: str = Field("gpt-4o-mini-tts", description="text to speech")
    voice: str = Field("alloy", description="the speech model's voice")
    format: Literal["mp3", "opus", "aac", "flac", "wav"] = Field(
        "mp3", description="audio format of spoken replies"
    )
    max_audio_bytes: int = Field(
        25 * 1024 * 1024, ge=1024, description="largest voice note sent for transcription"
    )
    max_speech_chars: int = Field(
        4096, ge=100, le=4096, description="reply text spoken at most (the rest is cut)"
    )
    timeout_seconds: float = Field(120.0, gt=0, description="seconds per audio request")
