"""Voice at the command line: `herald chat --audio NOTE` turns a voice note into the
turn's text (shown to the user), and a reply is spoken into an audio file as
`voice.reply` says (`--speech-out PATH`, else under the home's cache)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from herald.cli.common import err_console, fail

if TYPE_CHECKING:
    from herald.config import Settings


def _say(text: str, style: str = "dim") -> None:
    err_console().print(text, style=style, markup=False, highlight=False)


def query_with_voice_note(settings: Settings, query: str | None, audio: str) -> str:
    """The turn's text: the note's transcript (after `query`, when both are given)."""
    from herald.providers.voice import VoiceError, transcribe

    try:
        transcript = transcribe(settings.config, settings.secrets, audio)
    except VoiceError as exc:
        fail(f"cannot transcribe {audio}: {exc}")
    if not transcript:
        fail(f"{audio} has no speech Herald could transcribe")
    _say(f"🎤 {transcript}")
    return f"{query}\n\n{transcript}" if query else transcript


def speak_reply(settings: Settings, text: str, out: str | None) -> Path | None:
    """Speak `text` into `out` (default: the home's cache); a failure is reported, not
    raised: the written reply already reached the user."""
    from herald.providers.voice import VoiceError, speak

    try:
        audio = speak(settings.config, settings.secrets, text)
    except VoiceError as exc:
        _say(f"the reply was not spoken: {exc}", style="yellow")
        return None
    if out:
        target = Path(out).expanduser()
    else:
        folder = settings.home.cache_dir / "voice"
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / time.strftime(f"reply-%Y%m%d-%H%M%S.{settings.config.voice.format}")
    target.write_bytes(audio)
    _say(f"🔊 spoken reply: {target}")
    return target


__all__ = ["query_with_voice_note", "speak_reply"]
