"""The webhook endpoint as Meta (and an attacker) reach it: the verification handshake,
signatures checked on the raw body before anything is parsed, replays answered once."""

from __future__ import annotations

import json
import time

import httpx
from harness import StartGateway, model_user_texts
from whatsapp_harness import OWNER, PATH, VERIFY_TOKEN, WhatsAppHarness

from herald.testing.fake_llm import FakeLLMServer
from herald.testing.fake_whatsapp import APP_SECRET


def url(wa: WhatsAppHarness) -> str:
    return f"http://127.0.0.1:{wa.port}{PATH}"


def text_delivery(wa: WhatsAppHarness, wamid: str, text: str, sender: str = OWNER) -> bytes:
    """A delivery as Meta signs it; the fake learns that `sender` wrote now (its
    service window opens), as it does for the messages it posts itself."""
    wa.server.last_inbound[sender.lstrip("+")] = time.time()
    message = {
        "from": sender.lstrip("+"),
        "id": wamid,
        "timestamp": str(int(time.time())),
        "type": "text",
        "text": {"body": text},
    }
    return wa.server.delivery({"messages": [message]})


async def test_meta_verifies_the_callback_url_with_the_verify_token(
    wa: WhatsAppHarness, whatsapp_gateway: StartGateway
) -> None:
    await whatsapp_gateway()
    async with httpx.AsyncClient() as client:
        ok = await client.get(
            url(wa),
            params={
                "hub.mode": "subscribe",
                "hub.verify_token": VERIFY_TOKEN,
                "hub.challenge": "1158201444",
            },
        )
        assert (ok.status_code, ok.text) == (200, "1158201444")
        for params in (
            {"hub.mode": "subscribe", "hub.verify_token": "guess", "hub.challenge": "1"},
            {"hub.mode": "subscribe", "hub.verify_token": VERIFY_TOKEN[:-1], "hub.challenge": "1"},
            {"hub.mode": "unsubscribe", "hub.verify_token": VERIFY_TOKEN, "hub.challenge": "1"},
            {"hub.challenge": "1"},
        ):
            refused = await client.get(url(wa), params=params)
            assert refused.status_code == 403, params
            assert "1" not in refused.text


async def test_unsigned_tampered_and_wrongly_signed_deliveries_are_refused_before_parsing(
    wa: WhatsAppHarness, whatsapp_gateway: StartGateway, fake_llm: FakeLLMServer
) -> None:
    await whatsapp_gateway()
    body = text_delivery(wa, "wamid.forged1", "forged WORD-forged")
    tampered = body.replace(b"forged WORD-forged", b"forged WORD-evilxx")
    async with httpx.AsyncClient() as client:
        unsigned = await client.post(url(wa), content=body)
        assert unsigned.status_code == 401
        assert "X-Hub-Signature-256" in unsigned.json()["error"]["message"]
        bad = await client.post(url(wa), content=tampered, headers=wa.server.signed(body))
        assert bad.status_code == 403
        other = await client.post(url(wa), content=body, headers=wa.server.signed(body, "0" * 32))
        assert other.status_code == 403
        junk = b"{not json"  # signed but not JSON: 400, and a signature is checked first
        assert (await client.post(url(wa), content=junk)).status_code == 401
        assert (
            await client.post(url(wa), content=junk, headers=wa.server.signed(junk))
        ).status_code == 400
    wa.say(OWNER, "then WORD-real")
    await wa.wait_for(lambda s: s.text == "echo WORD-real", "the genuine message's answer")
    texts = model_user_texts(fake_llm)
    assert not any("WORD-forged" in t or "WORD-evil" in t for t in texts)


async def test_a_replayed_signed_delivery_is_answered_once(
    wa: WhatsAppHarness, whatsapp_gateway: StartGateway, fake_llm: FakeLLMServer
) -> None:
    """Someone who captured a genuine delivery posts it again: its signature is good,
    and the inbound ledger still answers it only once."""
    await whatsapp_gateway()
    body = text_delivery(wa, "wamid.captured1", "once WORD-captured")
    async with httpx.AsyncClient() as client:
        first = await client.post(url(wa), content=body, headers=wa.server.signed(body))
        assert first.status_code == 200
        await wa.wait_for(lambda s: s.text == "echo WORD-captured", "the first answer")
        again = await client.post(url(wa), content=body, headers=wa.server.signed(body))
        assert again.status_code == 200  # Meta would retry anything else for days
    wa.say(OWNER, "later WORD-later")
    await wa.wait_for(lambda s: s.text == "echo WORD-later", "the later answer")
    assert [s.text for s in wa.sent()].count("echo WORD-captured") == 1
    assert sum("WORD-captured" in t for t in model_user_texts(fake_llm)) == 1


async def test_a_failed_status_is_surfaced_in_health(
    wa: WhatsAppHarness, whatsapp_gateway: StartGateway
) -> None:
    running = await whatsapp_gateway()
    status = {
        "id": "wamid.gone1",
        "status": "failed",
        "recipient_id": OWNER.lstrip("+"),
        "timestamp": "1900000000",
        "errors": [{"code": 131026, "title": "Message undeliverable"}],
    }
    body = wa.server.delivery({"statuses": [status]})
    async with httpx.AsyncClient() as client:
        answer = await client.post(url(wa), content=body, headers=wa.server.signed(body))
    assert answer.status_code == 200
    health = running.runner.adapters["whatsapp"].health.assess()
    assert health.state == "degraded"
    assert "131026" in (health.last_error or "") and "undeliverable" in (health.last_error or "")


async def test_a_delivery_for_another_number_is_ignored(
    wa: WhatsAppHarness, whatsapp_gateway: StartGateway, fake_llm: FakeLLMServer
) -> None:
    await whatsapp_gateway()
    payload = json.loads(text_delivery(wa, "wamid.other1", "elsewhere WORD-elsewhere"))
    payload["entry"][0]["changes"][0]["value"]["metadata"]["phone_number_id"] = "999"
    body = json.dumps(payload).encode()
    async with httpx.AsyncClient() as client:
        answer = await client.post(url(wa), content=body, headers=wa.server.signed(body))
    assert answer.status_code == 200
    wa.say(OWNER, "then WORD-mine")
    await wa.wait_for(lambda s: s.text == "echo WORD-mine", "the answer")
    assert not any("WORD-elsewhere" in t for t in model_user_texts(fake_llm))
    assert APP_SECRET not in " ".join(s.text for s in wa.sent())
