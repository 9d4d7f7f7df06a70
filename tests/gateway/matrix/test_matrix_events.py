"""Room events as the gateway reads them (no server): mentions, replies and their quoted
fallback, threads, edits, files and reactions."""

from __future__ import annotations

from typing import Any

from herald.gateway.platforms.matrix.events import parse_message, parse_reaction

ME = "@herald:example.org"


def message(content: dict[str, Any], sender: str = "@you:example.org") -> dict[str, Any]:
    return {
        "type": "m.room.message",
        "event_id": "$e1",
        "room_id": "!r:example.org",
        "sender": sender,
        "content": content,
    }


def test_a_mention_is_seen_and_taken_out_of_the_text() -> None:
    pill = {
        "msgtype": "m.text",
        "body": "Herald: what is the time?",
        "formatted_body": f'<a href="https://matrix.to/#/{ME}">Herald</a>: what is the time?',
    }
    parsed = parse_message(message(pill), ME, "Herald")
    assert parsed is not None and parsed.mentioned and parsed.text == "what is the time?"
    intentional = {"msgtype": "m.text", "body": "hi", "m.mentions": {"user_ids": [ME]}}
    assert parse_message(message(intentional), ME, None).mentioned  # type: ignore[union-attr]
    plain = parse_message(message({"msgtype": "m.text", "body": "hi all"}), ME, "Herald")
    assert plain is not None and not plain.mentioned


def test_a_display_name_alone_is_not_a_mention() -> None:
    """Anyone can call themselves anything; only the id or an intentional mention counts."""
    parsed = parse_message(message({"msgtype": "m.text", "body": "Herald, run this"}), ME, "Herald")
    assert parsed is not None and not parsed.mentioned


def test_a_reply_keeps_its_target_and_drops_the_quoted_fallback() -> None:
    content = {
        "msgtype": "m.text",
        "body": "> <@herald:example.org> the old answer\n> second line\n\nand now this",
        "m.relates_to": {"m.in_reply_to": {"event_id": "$old"}},
    }
    parsed = parse_message(message(content), ME, None)
    assert parsed is not None and parsed.reply_to == "$old" and parsed.text == "and now this"


def test_a_thread_message_names_its_root() -> None:
    content = {
        "msgtype": "m.text",
        "body": "in the thread",
        "m.relates_to": {"rel_type": "m.thread", "event_id": "$root", "is_falling_back": True},
    }
    parsed = parse_message(message(content), ME, None)
    assert parsed is not None and parsed.thread_root == "$root"


def test_edits_notices_and_own_messages_are_not_new_messages() -> None:
    edit = {
        "msgtype": "m.text",
        "body": "* fixed",
        "m.new_content": {"msgtype": "m.text", "body": "fixed"},
        "m.relates_to": {"rel_type": "m.replace", "event_id": "$e0"},
    }
    assert parse_message(message(edit), ME, None) is None
    assert parse_message(message({"msgtype": "m.notice", "body": "bot says"}), ME, None) is None
    assert parse_message(message({"msgtype": "m.text", "body": "me"}, sender=ME), ME, None) is None


def test_a_file_with_a_caption_and_an_encrypted_file() -> None:
    captioned = {
        "msgtype": "m.file",
        "body": "see this",
        "filename": "notes.txt",
        "url": "mxc://example.org/abc",
        "info": {"mimetype": "text/plain", "size": 12},
    }
    parsed = parse_message(message(captioned), ME, None)
    assert parsed is not None and parsed.text == "see this"
    assert parsed.media is not None and parsed.media.name == "notes.txt"
    assert parsed.media.url == "mxc://example.org/abc" and parsed.media.size == 12
    sealed = {
        "msgtype": "m.image",
        "body": "cat.png",
        "file": {"url": "mxc://example.org/enc", "key": {"k": "x"}, "iv": "y", "hashes": {}},
        "info": {"mimetype": "image/png"},
    }
    parsed = parse_message(message(sealed), ME, None)
    assert parsed is not None and parsed.text == ""
    assert parsed.media is not None and parsed.media.url == "mxc://example.org/enc"
    assert parsed.media.encrypted_file is not None


def test_only_an_m_audio_with_the_voice_mark_is_a_voice_note() -> None:
    audio = {
        "msgtype": "m.audio",
        "body": "Voice message.ogg",
        "url": "mxc://example.org/v",
        "info": {"mimetype": "audio/ogg", "size": 9},
    }
    music = parse_message(message(audio), ME, None)
    assert music is not None and music.media is not None and not music.media.voice
    voice = parse_message(message({**audio, "org.matrix.msc3245.voice": {}}), ME, None)
    assert voice is not None and voice.media is not None and voice.media.voice
    marked_file = {**audio, "msgtype": "m.file", "org.matrix.msc3245.voice": {}}
    parsed = parse_message(message(marked_file), ME, None)
    assert parsed is not None and parsed.media is not None and not parsed.media.voice


def test_a_reaction_names_its_target_and_key() -> None:
    raw = {
        "type": "m.reaction",
        "content": {"m.relates_to": {"rel_type": "m.annotation", "event_id": "$p", "key": "👍"}},
    }
    assert parse_reaction(raw) == ("$p", "👍")
    assert parse_reaction({"type": "m.reaction", "content": {}}) is None
