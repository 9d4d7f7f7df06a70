"""Email beyond the contract, through the real gateway on Dovecot and aiosmtpd."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterator

import pytest
from email_harness import MEMBER, OWNER, EmailHarness
from harness import PlatformHarness

from conftest import StartGateway

pytest.importorskip("aioimaplib")
pytest.importorskip("aiosmtpd")


@pytest.fixture
def harness() -> Iterator[PlatformHarness]:
    made = EmailHarness()
    made.start()
    try:
        yield made
    finally:
        made.stop()


async def test_a_mail_is_labelled_by_its_sender_address_unless_it_is_the_owners(
    harness: EmailHarness, gateway: StartGateway
) -> None:
    running = await gateway()
    harness.say(MEMBER, "from dana WORD-dana")
    harness.say(OWNER, "from the owner WORD-owner")
    await harness.wait_for(lambda s: s.text == "echo WORD-owner", "the owner's answer")
    with sqlite3.connect(running.settings.home.state_db) as db:
        for _ in range(200):
            rows = dict(
                db.execute(
                    "SELECT substr(content, instr(content, 'WORD-')), provenance FROM messages"
                    " WHERE role = 'user' AND content LIKE '%WORD-%'"
                ).fetchall()
            )
            if len(rows) == 2:
                break
            await asyncio.sleep(0.05)
    assert rows == {"WORD-dana": f"untrusted:email:{MEMBER}", "WORD-owner": "owner"}
