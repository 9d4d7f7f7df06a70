"""The fake Discord server with the real discord.py client over loopback: login, gateway
hello/identify/READY, heartbeats and acks, MESSAGE_CREATE and INTERACTION_CREATE,
resume after a drop (missed events replayed), a refused resume, acks that stop."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

discord = pytest.importorskip("discord")

from herald.gateway.platforms.discord.connection import make_client  # noqa: E402
from herald.testing.fake_discord import FakeDiscordServer  # noqa: E402


@pytest.fixture
def server() -> Iterator[FakeDiscordServer]:
    with FakeDiscordServer(heartbeat_interval_ms=300) as fake:
        yield fake


class Seen:
    def __init__(self) -> None:
        self.messages: list[Any] = []
        self.interactions: list[Any] = []
        self.resumed = 0
        self.changed = asyncio.Event()

    async def wait(self, predicate: Any, timeout: float = 10.0) -> None:
        async with asyncio.timeout(timeout):
            while True:
                self.changed.clear()  # before the check, so a change after it is not lost
                if predicate():
                    return
                await self.changed.wait()


@asynccontextmanager
async def connected(server: FakeDiscordServer, **options: Any) -> AsyncIterator[tuple[Any, Seen]]:
    seen = Seen()
    intents = discord.Intents.none()
    intents.guilds = intents.guild_messages = intents.dm_messages = True
    intents.message_content = True
    options.setdefault("guild_ready_timeout", 0.1)  # the library waits this long for guilds
    client = make_client(
        intents=intents, api_base=server.api_base, gateway_url=server.gateway_url, **options
    )

    @client.event
    async def on_message(message: Any) -> None:
        seen.messages.append(message)
        seen.changed.set()

    @client.event
    async def on_interaction(interaction: Any) -> None:
        seen.interactions.append(interaction)
        seen.changed.set()

    @client.event
    async def on_resumed() -> None:
        seen.resumed += 1
        seen.changed.set()

    await client.login(server.token)
    task = asyncio.create_task(client.connect())
    try:
        async with asyncio.timeout(10):
            await client.wait_until_ready()
        yield client, seen
    finally:
        await client.close()
        await asyncio.gather(task, return_exceptions=True)


async def test_login_identify_and_a_message_both_ways(server: FakeDiscordServer) -> None:
    alice = server.add_user("alice")
    guild = server.add_guild("home", alice)
    general = server.add_channel(guild, "general")
    async with connected(server) as (client, seen):
        assert client.user.id == server.bot_id
        assert client.get_channel(general).name == "general"
        server.send_user_message(general, alice, "hello", mention_bot=True)
        await seen.wait(lambda: seen.messages)
        message = seen.messages[0]
        assert message.author.id == alice and client.user in message.mentions
        await message.channel.send("hi alice", reference=message)
    [sent] = server.sent_messages(general)
    assert sent.content == "hi alice" and sent.reply_to == message.id
    assert server.counters.identifies == 1
    assert server.counters.intents[0] & (1 << 15)  # message content


async def test_heartbeats_are_acknowledged(server: FakeDiscordServer) -> None:
    async with connected(server):
        await asyncio.to_thread(server.wait_until, lambda: server.counters.acks_sent >= 3)
    assert server.counters.heartbeats >= 3


async def test_a_dropped_connection_resumes_and_missed_events_are_replayed(
    server: FakeDiscordServer,
) -> None:
    alice = server.add_user("alice")
    dm = server.dm_channel(alice)
    async with connected(server) as (_client, seen):
        server.go_silent()  # events are numbered and kept, none goes down the socket
        server.send_user_message(dm, alice, "while you were away")
        server.go_silent(False)
        server.drop_connections()
        await seen.wait(lambda: seen.resumed and seen.messages)
    assert [m.content for m in seen.messages] == ["while you were away"]
    assert (server.counters.identifies, server.counters.resumes) == (1, 1)


@pytest.mark.slow  # discord.py waits 5 s before identifying again
async def test_a_refused_resume_identifies_again(server: FakeDiscordServer) -> None:
    alice = server.add_user("alice")
    dm = server.dm_channel(alice)
    async with connected(server) as (_client, seen):
        server.refuse_next_resume()
        server.drop_connections(code=4000)
        await asyncio.to_thread(server.wait_until, lambda: server.counters.identifies == 2)
        server.send_user_message(dm, alice, "still there?")
        await seen.wait(lambda: seen.messages)
    assert server.counters.resumes_refused == 1


async def test_acks_that_stop_make_the_library_reconnect(server: FakeDiscordServer) -> None:
    async with connected(server, heartbeat_timeout=1.0):
        server.stop_acks()
        await asyncio.to_thread(server.wait_until, lambda: server.counters.connections >= 2, 15.0)
        server.resume_acks()
        await asyncio.to_thread(server.wait_until, lambda: server.counters.resumes >= 1, 15.0)


async def test_a_button_press_arrives_as_an_interaction(server: FakeDiscordServer) -> None:
    alice = server.add_user("alice")
    dm = server.dm_channel(alice)
    async with connected(server) as (client, seen):
        channel = await client.fetch_channel(dm)
        view = discord.ui.View()
        view.add_item(discord.ui.Button(label="Approve", custom_id="approve:1"))
        message = await channel.send("approve?", view=view)
        server.press_button(message.id, "approve:1", alice)
        await seen.wait(lambda: seen.interactions)
        interaction = seen.interactions[0]
        assert interaction.user.id == alice and interaction.data["custom_id"] == "approve:1"
        await interaction.response.edit_message(content="approved", view=None)
    [sent] = server.sent_messages(dm)
    assert [b["custom_id"] for b in sent.buttons()] == ["approve:1"]
    assert server.edits[-1].content == "approved"


async def test_files_go_up_as_multipart_and_come_down_from_the_cdn(
    server: FakeDiscordServer,
) -> None:
    alice = server.add_user("alice")
    dm = server.dm_channel(alice)
    async with connected(server) as (client, seen):
        server.send_user_message(dm, alice, "see file", attachments=[("notes.txt", b"abc")])
        await seen.wait(lambda: seen.messages)
        [attachment] = seen.messages[0].attachments
        assert await attachment.read() == b"abc"
        channel = await client.fetch_channel(dm)
        await channel.send("here", file=discord.File(__file__, filename="back.py"))
    [sent] = server.sent_messages(dm)
    assert sent.files[0].filename == "back.py" and sent.files[0].data.startswith(b'"""')


async def test_over_long_content_is_refused_like_discord(server: FakeDiscordServer) -> None:
    alice = server.add_user("alice")
    dm = server.dm_channel(alice)
    async with connected(server) as (client, _seen):
        channel = await client.fetch_channel(dm)
        with pytest.raises(discord.HTTPException) as caught:
            await channel.send("x" * 2001)
    assert caught.value.code == 50035


async def test_a_429_is_waited_out_by_the_library(server: FakeDiscordServer) -> None:
    alice = server.add_user("alice")
    dm = server.dm_channel(alice)
    async with connected(server) as (client, _seen):
        channel = await client.fetch_channel(dm)
        server.fail_next("POST", "/messages", status=429, retry_after=0.2)
        await channel.send("after the limit")
    statuses = [c.status for c in server.calls if c.path.endswith("/messages")]
    assert statuses == [429, 200]
