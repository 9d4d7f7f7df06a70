"""The 24 h customer-service window: free text inside it, an approved template outside
it (with the reply held until the person writes again), Meta's 131047 when Herald
guessed wrong, and rate limits retried from the delivery ledger."""

from __future__ import annotations

import asyncio

from harness import StartGateway
from whatsapp_harness import MEMBER, OWNER, WhatsAppHarness

DAY = 24 * 3600.0


async def test_outside_the_window_a_template_goes_and_the_reply_follows_when_they_write(
    wa: WhatsAppHarness, whatsapp_gateway: StartGateway
) -> None:
    await whatsapp_gateway()
    wa.server.user_message(OWNER, "old WORD-old", age=DAY + 3600)  # delivered a day late
    template = await wa.wait_for(lambda s: s.extra["template"] is not None, "the template")
    name, language, parameters = template.extra["template"]
    assert (name, language) == ("herald_reply", "en_US")
    assert parameters == ("echo WORD-old",)
    assert not any(s.text == "echo WORD-old" for s in wa.sent())  # no free text went
    assert not wa.server.refused and not wa.server.sent_to(OWNER)[0].text

    wa.say(OWNER, "now WORD-now")  # they write: the window opens
    await wa.wait_for(lambda s: s.text == "echo WORD-now", "the new answer")
    held = await wa.wait_for(lambda s: s.text == "echo WORD-old", "the held reply")
    assert held.extra["template"] is None
    assert [s.text for s in wa.sent()].count("echo WORD-old") == 1


async def test_when_herald_does_not_know_the_window_meta_s_131047_sends_the_template(
    wa: WhatsAppHarness, whatsapp_gateway: StartGateway
) -> None:
    """Herald writes first (a notice to someone who never wrote): the free text is
    accepted, then fails with a status carrying 131047; the template goes instead."""
    running = await whatsapp_gateway()
    landed = await running.runner.deliver_text("whatsapp", MEMBER, "reminder WORD-remind")
    assert landed
    for _ in range(400):
        sent = wa.server.sent_to(MEMBER)
        if any(s.template for s in sent):
            break
        await asyncio.sleep(0.05)
    kinds = [(s.kind, s.text, s.template) for s in wa.server.sent_to(MEMBER)]
    assert kinds[0][:2] == ("text", "reminder WORD-remind")  # failed later, with 131047
    assert kinds[1][0] == "template" and kinds[1][2] == (
        "herald_reply",
        "en_US",
        ("reminder WORD-remind",),
    )
    health = running.runner.adapters["whatsapp"].health.assess()
    assert "131047" in (health.last_error or "")


async def test_a_synchronous_131047_also_falls_back_to_the_template(
    wa: WhatsAppHarness, whatsapp_gateway: StartGateway
) -> None:
    running = await whatsapp_gateway()
    wa.server.reengagement_sync = True
    assert await running.runner.deliver_text("whatsapp", MEMBER, "reminder WORD-sync")
    (only,) = wa.server.sent_to(MEMBER)  # the refused text was never recorded as sent
    assert only.template == ("herald_reply", "en_US", ("reminder WORD-sync",))


async def test_without_a_template_the_closed_window_is_a_clear_error(
    wa: WhatsAppHarness, whatsapp_gateway: StartGateway
) -> None:
    running = await whatsapp_gateway(platform={"template_name": None})
    wa.server.reengagement_sync = True
    assert not await running.runner.deliver_text("whatsapp", MEMBER, "reminder WORD-none")
    assert wa.server.sent_to(MEMBER) == []
    error = running.runner.adapters["whatsapp"].health.assess().last_error or ""
    assert "24 h window" in error and "template_name" in error


async def test_a_rate_limited_reply_is_retried_and_sent_once(
    wa: WhatsAppHarness, whatsapp_gateway: StartGateway
) -> None:
    running = await whatsapp_gateway()
    wa.server.rate_limit(2)  # 429 with code 130429, twice
    wa.say(OWNER, "busy WORD-limited")
    await wa.wait_for(lambda s: s.text == "echo WORD-limited", "the retried answer")
    assert [s.text for s in wa.sent()].count("echo WORD-limited") == 1
    for _ in range(200):
        if running.runner.outbox.undelivered() == []:
            break
        await asyncio.sleep(0.05)
    assert running.runner.outbox.undelivered() == []
