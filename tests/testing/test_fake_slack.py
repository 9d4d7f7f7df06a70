"""The fake Slack server with the real slack-bolt / slack_sdk clients over loopback:
Socket Mode hello, envelopes and acks, app_mention next to message, block actions,
the external file upload flow, a dropped socket and a refresh (new URL), unacked
events retried with the same event_id, and signed HTTP delivery."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

pytest.importorskip("slack_bolt")

from aiohttp import web
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp
from slack_sdk.signature import SignatureVerifier
from slack_sdk.web.async_client import AsyncWebClient

from herald.testing.fake_slack import FakeSlackServer


@pytest.fixture
def server() -> Iterator[FakeSlackServer]:
    with FakeSlackServer() as fake:
        yield fake


@asynccontextmanager
async def socket_app(
    server: FakeSlackServer,
) -> AsyncIterator[tuple[AsyncApp, list[dict[str, Any]]]]:
    client = AsyncWebClient(token=server.bot_token, base_url=server.api_url)
    app = AsyncApp(client=client)
    seen: list[dict[str, Any]] = []

    @app.event("message")
    async def on_message(event: dict[str, Any], say: Any) -> None:
        seen.append(event)
        await say(text=f"echo: {event['text']}", thread_ts=event.get("thread_ts"))

    @app.event("app_mention")
    async def on_mention(event: dict[str, Any]) -> None:
        seen.append(event)

    @app.action("approve")
    async def on_approve(ack: Any, body: dict[str, Any], client: AsyncWebClient) -> None:
        await ack()
        seen.append(body)
        await client.chat_update(
            channel=body["channel"]["id"], ts=body["message"]["ts"], text="approved", blocks=[]
        )

    handler = AsyncSocketModeHandler(app, server.app_token)
    handler.client.ping_interval = 0.5
    await handler.connect_async()
    try:
        await server.await_until(lambda: server.counters.connections >= 1)
        yield app, seen
    finally:
        await handler.close_async()


async def test_a_dm_arrives_as_an_envelope_is_acked_and_answered(server: FakeSlackServer) -> None:
    alice = server.add_user("alice")
    dm = server.dm_channel(alice)
    async with socket_app(server) as (_app, seen):
        server.send_user_message(dm, alice, "hello")
        [reply] = await server.await_posts(dm, 1)
    assert reply.text == "echo: hello"
    assert seen[0]["channel_type"] == "im" and seen[0]["user"] == alice
    await server.await_until(lambda: all(e.acked for e in server.envelopes))


async def test_a_mention_in_a_channel_is_two_events(server: FakeSlackServer) -> None:
    alice = server.add_user("alice")
    general = server.add_channel("general")
    async with socket_app(server) as (_app, seen):
        server.send_user_message(general, alice, "look", mention_bot=True)
        await server.await_until(lambda: len(seen) == 2)
    assert sorted(e["type"] for e in seen) == ["app_mention", "message"]
    assert len({e.payload["event_id"] for e in server.envelopes}) == 2
    assert seen[0]["ts"] == seen[1]["ts"]


async def test_a_button_press_is_a_block_action(server: FakeSlackServer) -> None:
    alice = server.add_user("alice")
    dm = server.dm_channel(alice)
    client = AsyncWebClient(token=server.bot_token, base_url=server.api_url)
    blocks = [
        {"type": "section", "text": {"type": "mrkdwn", "text": "run it?"}},
        {
            "type": "actions",
            "block_id": "approval",
            "elements": [
                {
                    "type": "button",
                    "action_id": "approve",
                    "value": "42",
                    "text": {"type": "plain_text", "text": "Approve"},
                }
            ],
        },
    ]
    async with socket_app(server) as (_app, seen):
        posted = await client.chat_postMessage(channel=dm, text="run it?", blocks=blocks)
        server.press_button(dm, posted["ts"], "approve", alice, value="42")
        await server.await_until(lambda: server.updates)
    assert seen[0]["user"]["id"] == alice and seen[0]["actions"][0]["value"] == "42"
    assert server.updates[0].text == "approved"


async def test_files_up_and_down(server: FakeSlackServer) -> None:
    alice = server.add_user("alice")
    dm = server.dm_channel(alice)
    client = AsyncWebClient(token=server.bot_token, base_url=server.api_url)
    await client.files_upload_v2(
        channel=dm, content=b"report body", filename="report.txt", initial_comment="here"
    )
    [upload] = server.uploads
    assert (upload.filename, upload.data, upload.channel) == ("report.txt", b"report body", dm)
    async with socket_app(server) as (_app, seen):
        server.send_user_message(dm, alice, "see", files=[("in.txt", b"abc")])
        await server.await_until(lambda: seen)
    url = seen[0]["files"][0]["url_private_download"]
    async with client.session if client.session else _session() as session:
        async with session.get(url, headers={"Authorization": f"Bearer {server.bot_token}"}) as r:
            assert await r.read() == b"abc"
        async with session.get(url) as r:
            assert b"sign in" in await r.read()  # no token: Slack's login page


def _session() -> Any:
    import aiohttp

    return aiohttp.ClientSession()


async def test_a_dropped_socket_reconnects_and_a_refresh_opens_a_new_url(
    server: FakeSlackServer,
) -> None:
    alice = server.add_user("alice")
    dm = server.dm_channel(alice)
    async with socket_app(server):
        server.send_disconnect("refresh_requested")
        await server.await_until(lambda: server.counters.connections >= 2)
        assert server.counters.connections_opened == 2  # a refresh asks for a new URL
        server.drop_connections()
        await server.await_until(lambda: server.counters.connections >= 3, 15)
        server.send_user_message(dm, alice, "still there?")
        await server.await_posts(dm, 1)


async def test_pongs_that_stop_make_the_client_reconnect(server: FakeSlackServer) -> None:
    async with socket_app(server):
        server.stop_pongs()
        await server.await_until(lambda: server.counters.connections >= 2, 15)


async def test_unacked_events_are_retried_with_the_same_event_id(server: FakeSlackServer) -> None:
    alice = server.add_user("alice")
    dm = server.dm_channel(alice)
    # no timed retry here: on a loaded machine an ack later than its timer gets a retry
    # of its own (attempt 1) before the redelivery this test makes (the timer is
    # exercised over HTTP below and by the contract harness)
    server.retry_unacked_after(None)
    server.send_user_message(dm, alice, "anyone?")  # nobody is connected: queued
    async with socket_app(server) as (_app, seen):
        await server.await_until(lambda: seen)
    first = server.envelopes[0]
    assert first.acked and first.retry_attempt == 0
    server.redeliver(first.payload["event_id"])
    assert server.envelopes[-1].retry_attempt == 1
    assert server.envelopes[-1].payload["event_id"] == first.payload["event_id"]


async def test_http_delivery_is_signed_and_retried_until_200(server: FakeSlackServer) -> None:
    alice = server.add_user("alice")
    dm = server.dm_channel(alice)
    verifier = SignatureVerifier(server.signing_secret)
    statuses = [500, 200]
    bodies: list[tuple[bytes, dict[str, str]]] = []

    async def receive(request: web.Request) -> web.Response:
        body = await request.read()
        assert verifier.is_valid_request(body, dict(request.headers))
        bodies.append((body, dict(request.headers)))
        return web.Response(status=statuses.pop(0))

    app = web.Application()
    app.router.add_post("/slack/events", receive)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        server.retry_unacked_after(0.1)
        server.deliver_over_http(f"http://127.0.0.1:{port}/slack/events")
        server.send_user_message(dm, alice, "over http")
        await server.await_until(lambda: server.counters.http_deliveries == [500, 200])
    finally:
        await runner.cleanup()
    assert bodies[1][1]["X-Slack-Retry-Num"] == "1"
    assert bodies[0][0] == bodies[1][0]


async def test_web_api_errors_are_slack_shaped(server: FakeSlackServer) -> None:
    from slack_sdk.errors import SlackApiError

    client = AsyncWebClient(token=server.bot_token, base_url=server.api_url)
    with pytest.raises(SlackApiError) as caught:
        await client.chat_postMessage(channel="C404", text="x")
    assert caught.value.response["error"] == "channel_not_found"
    wrong = AsyncWebClient(token="xoxb-wrong", base_url=server.api_url)
    with pytest.raises(SlackApiError) as caught:
        await wrong.auth_test()
    assert caught.value.response["error"] == "invalid_auth"
    server.fail_next("auth.test", status=429, retry_after=1)
    with pytest.raises(SlackApiError) as caught:
        await client.auth_test()
    assert caught.value.response.status_code == 429
    await asyncio.sleep(0)
