"""Voice: speech to text and text to speech on an OpenAI-compatible provider.

`transcribe` sends a voice note to ``/v1/audio/transcriptions``; `speak` gets a
spoken reply from ``/v1/audio/speech``. Both go through the official OpenAI SDK
to ``voice.base_url`` (default: the main model's server when it speaks the
OpenAI API). A provider without these endpoints (Anthropic, most local servers)
gives a `VoiceUnavailable` that says which key to set.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from herald.config import HeraldConfig, Secrets

OPENAI_BASE_URL = "https://api.openai.com/v1"


class VoiceError(RuntimeError):
    """An audio request failed; the message says why."""


class VoiceUnavailable(VoiceError):
    """The configured provider has no audio endpoints."""


@dataclass(frozen=True)
class VoiceEndpoint:
    base_url: str
    api_key: str | None


def voice_endpoint(config: HeraldConfig, secrets: Secrets) -> VoiceEndpoint:
    from herald.providers.selection import ProviderConfigError, resolve_selection

    voice = config.voice
    base_url, key_env = voice.base_url, voice.api_key_env
    if base_url is None:
        try:
            endpoint = resolve_selection(config, secrets).endpoint
        except ProviderConfigError as exc:
            raise VoiceUnavailable(f"no model is configured for voice: {exc}") from None
        if endpoint.api_mode != "chat_completions":
            raise VoiceUnavailable(
                f"the {endpoint.provider} provider has no speech endpoints "
                "(/v1/audio/transcriptions, /v1/audio/speech): set voice.base_url (and "
                "voice.api_key_env) to an OpenAI-compatible server that has them"
            )
        base_url = endpoint.base_url or OPENAI_BASE_URL
        key_env = key_env or endpoint.key_env
    return VoiceEndpoint(base_url.rstrip("/"), secrets.get(key_env) if key_env else None)


def _client(config: HeraldConfig, endpoint: VoiceEndpoint):  # type: ignore[no-untyped-def]
    from openai import OpenAI

    return OpenAI(
        base_url=endpoint.base_url,
        api_key=endpoint.api_key or "no-key",
        timeout=config.voice.timeout_seconds,
        max_retries=1,
    )


def _failure(exc: Exception, endpoint: VoiceEndpoint, path: str) -> VoiceError:
    import openai

    if isinstance(exc, openai.NotFoundError):
        return VoiceUnavailable(
            f"{endpoint.base_url} has no {path} endpoint (it answered 404): set voice.base_url "
            "to an OpenAI-compatible server that has it, or the model names "
            "(voice.transcription_model, voice.speech_model) to ones it serves"
        )
    if isinstance(exc, openai.AuthenticationError):
        return VoiceError(f"{endpoint.base_url} refused the key for {path}: set voice.api_key_env")
    if isinstance(exc, openai.APIConnectionError):
        return VoiceError(f"{endpoint.base_url} could not be reached for {path}: {exc}")
    return VoiceError(f"{path} failed: {exc}")


def transcribe(config: HeraldConfig, secrets: Secrets, audio: str | Path) -> str:
    """The text of a voice note (any format the provider takes: ogg, mp3, m4a, wav…)."""
    import openai

    path = Path(audio).expanduser()
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise VoiceError(f"cannot read {path}: {exc.strerror or exc}") from None
    if size > config.voice.max_audio_bytes:
        raise VoiceError(
            f"{path} is {size:,} bytes; voice notes up to {config.voice.max_audio_bytes:,} "
            "(voice.max_audio_bytes) can be transcribed"
        )
    endpoint = voice_endpoint(config, secrets)
    try:
        with path.open("rb") as fh:
            result = _client(config, endpoint).audio.transcriptions.create(
                model=config.voice.transcription_model, file=fh
            )
    except openai.OpenAIError as exc:
        raise _failure(exc, endpoint, "/audio/transcriptions") from None
    return str(getattr(result, "text", result)).strip()


def speak(config: HeraldConfig, secrets: Secrets, text: str) -> bytes:
    """`text` spoken, as audio in `voice.format`."""
    import openai

    voice = config.voice
    endpoint = voice_endpoint(config, secrets)
    try:
        response = _client(config, endpoint).audio.speech.create(
            model=voice.speech_model,
            voice=voice.voice,
            input=text[: voice.max_speech_chars],
            response_format=voice.format,
        )
    except openai.OpenAIError as exc:
        raise _failure(exc, endpoint, "/audio/speech") from None
    return response.read()


def should_speak(config: HeraldConfig, *, heard_voice: bool) -> bool:
    """`voice.reply`: always, never, or (auto) when the message was a voice note."""
    setting = config.voice.reply
    return setting == "always" or (setting == "auto" and heard_voice)


__all__ = [
    "VoiceEndpoint",
    "VoiceError",
    "VoiceUnavailable",
    "should_speak",
    "speak",
    "transcribe",
    "voice_endpoint",
]
