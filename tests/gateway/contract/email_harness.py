"""Email under the adapter contract: the adapter against a real Dovecot (IMAP IDLE) and
a real SMTP server (aiosmtpd), as the email end-to-end tests use them.

A person's "DM" is one mail thread: their first mail starts it and each later one
answers the newest mail of the thread (In-Reply-To, References), as a mail client
does, so it is one session. Approvals are reply codes (``approve 3F2A``), pressed by
answering with that line. Email has no group chats; its limit (100 000 characters)
splits nothing the contract sends. The adapter reaches both servers through
`TcpFaultProxy`s (the tests' own IMAP client goes straight to Dovecot), which play the
liveness suite's faults at the byte level: a silent link, cut connections, a server
that turns every connection away.
"""

from __future__ import annotations

import imaplib
import re
import shutil
import tempfile
import time
from email.message import EmailMessage
from email.utils import make_msgid
from pathlib import Path
from typing import Any, ClassVar

import pytest
from harness import FileSeen, PlatformHarness, Sent, Where

HERALD = "herald@example.org"
OWNER, MEMBER = "owner@example.org", "dana@example.org"
PASSWORD = "imap-pass-for-contract-tests"
_IMAP_BYE = b"* BYE [UNAVAILABLE] Server overloaded, try again later (test proxy)\r\n"
_SMTP_421 = b"421 4.3.2 Service not available, try again later (test proxy)\r\n"
_CODE_LINE = re.compile(r"^\s+(approve|deny) ([0-9A-F]{4})(?: (session|always))?\s*$", re.M)


class EmailHarness(PlatformHarness):
    name = "email"
    media = True
    owner = OWNER
    member = MEMBER
    thread_a = thread_b = ""
    supports_edits = False
    # A storm is servers turning every connection away (IMAP's BYE, SMTP's 421)
    storm_marks = ("UNAVAILABLE", "421")
    lacks: ClassVar[dict[str, str]] = {
        "groups": "mail goes between two people; a list is many such threads",
        "splitting": "its limit (100 000 characters) is above the longest contract reply",
    }

    def __init__(self) -> None:
        self._root = Path(tempfile.mkdtemp(prefix="herald-email-contract-"))
        self.dovecot: Any = None
        self.smtp: Any = None
        self.proxies: list[Any] = []
        self._threads: dict[str, list[str]] = {}  # person -> Message-IDs of their thread
        self._raw: list[bytes] = []  # every mail put in the box, for replays

    def start(self) -> None:
        from herald.testing.dovecot import DovecotServer, DovecotUnavailable
        from herald.testing.smtp_sink import SmtpSink
        from herald.testing.tcp_fault_proxy import TcpFaultProxy

        try:
            self.dovecot = DovecotServer(self._root / "dovecot", {"herald": PASSWORD}).start()
        except DovecotUnavailable as exc:
            pytest.skip(f"no IMAP server: {exc}")
        self.smtp = SmtpSink(user="herald", password=PASSWORD).start()
        self.imap_proxy = TcpFaultProxy(self.dovecot.host, self.dovecot.port, refusal=_IMAP_BYE)
        self.smtp_proxy = TcpFaultProxy(self.smtp.host, self.smtp.port, refusal=_SMTP_421)
        self.proxies = [self.imap_proxy.start(), self.smtp_proxy.start()]
        self.imap = imaplib.IMAP4(self.dovecot.host, self.dovecot.port)
        self.imap.login("herald", PASSWORD)
        self.imap.select("INBOX")

    def stop(self) -> None:
        for proxy in self.proxies:
            proxy.stop()
        if self.smtp is not None:
            self.smtp.stop()
        if self.dovecot is not None:
            try:
                self.imap.logout()
            except (imaplib.IMAP4.error, OSError):
                pass
            self.dovecot.stop()
        shutil.rmtree(self._root, ignore_errors=True)

    def platform_config(self) -> dict[str, Any]:
        return {
            "enabled": True,
            "address": HERALD,
            "username": "herald",
            "password": "${HERALD_EMAIL_PASSWORD}",
            "allowed_users": [OWNER, MEMBER],
            "sender_auth": "off",  # mail is put in the box directly, with no auth headers
            "imap_host": self.imap_proxy.host,
            "imap_port": self.imap_proxy.port,
            "imap_security": "none",
            "smtp_host": self.smtp_proxy.host,
            "smtp_port": self.smtp_proxy.port,
            "smtp_security": "none",
        }

    def liveness_config(self) -> dict[str, Any]:
        # IDLE renewed every second: a silent link is noticed within two
        return {"idle_seconds": 1.0, "silence_slack_seconds": 1.0}

    def env(self) -> dict[str, str]:
        return {"HERALD_EMAIL_PASSWORD": PASSWORD}

    def max_length(self) -> int:
        return 100_000

    # ---- playing the people -------------------------------------------------------------

    def say(
        self,
        user: str,
        text: str,
        *,
        where: Where = "dm",
        thread: str | None = None,
        attachment: tuple[str, str, bytes] | None = None,
    ) -> str:
        assert where == "dm", "email has no group chats"
        msg = EmailMessage()
        msg["From"] = user
        msg["To"] = HERALD
        earlier = self._threads.setdefault(user, [])
        msg["Subject"] = "Re: Contract" if earlier else "Contract"
        msg_id = make_msgid(domain="example.org")
        msg["Message-ID"] = msg_id
        if earlier:
            msg["In-Reply-To"] = earlier[-1]
            msg["References"] = " ".join(earlier)
        msg.set_content(text)
        if attachment is not None:
            name, mime, data = attachment
            maintype, _, subtype = mime.partition("/")
            msg.add_attachment(data, maintype=maintype, subtype=subtype, filename=name)
        earlier.append(msg_id)
        self._append(bytes(msg))
        return msg_id

    def _append(self, raw: bytes) -> None:
        self._raw.append(raw)
        date = imaplib.Time2Internaldate(time.time())
        status, _ = self.imap.append("INBOX", "", date, raw)
        assert status == "OK"

    def press(self, user: str, sent: Sent, data: str, *, where: Where = "dm") -> None:
        verb = "deny" if data == "/deny" else "approve"
        scope = data.removeprefix("/approve").strip()
        self.say(user, f"{verb} {sent.extra['code']} {scope}".rstrip())

    def replay_last_event(self) -> None:
        """The same mail lands in the box again (a second copy, same Message-ID)."""
        self._append(self._raw[-1])

    async def replay_taken(self) -> None:
        """Nothing to wait for: the adapter reads the folder in UID order, so whatever
        the test sends next is read after the copy."""

    def fail_sends(self, times: int) -> None:
        self.smtp.fail_next = times

    def fail_uploads(self, times: int) -> None:
        self.smtp.fail_next = times  # a file is a mail with an attachment

    def silence(self, on: bool) -> None:
        for proxy in self.proxies:
            proxy.silence(on)

    def drop_connections_every(self, seconds: float | None) -> None:
        for proxy in self.proxies:
            proxy.drop_connections_every(seconds)

    def storm(self, on: bool) -> None:
        for proxy in self.proxies:
            proxy.storm(on)

    # ---- what Herald sent -----------------------------------------------------------------

    def _mails(self) -> list[EmailMessage]:
        with self.smtp._lock:
            return [m for m in self.smtp.messages if str(m["To"]).lower() == OWNER]

    def sent(self, *, where: Where = "dm", thread: str | None = None) -> list[Sent]:
        found = []
        for mail in self._mails():
            body = mail.get_body(preferencelist=("plain",))
            content = body.get_content() if body is not None else ""
            text = "\n".join(content.splitlines()).rstrip("\n")  # SMTP's CRLFs
            codes = _CODE_LINE.findall(text)
            buttons = tuple(
                "/deny" if verb == "deny" else f"/approve {scope}".rstrip()
                for verb, _code, scope in codes
            )
            found.append(
                Sent(
                    ref=str(mail["Message-ID"]),
                    text=text,
                    buttons=buttons,
                    reply_to=str(mail["In-Reply-To"]) if mail["In-Reply-To"] else None,
                    extra={"code": codes[0][1] if codes else None},
                )
            )
        return found

    def files(self, *, where: Where = "dm", thread: str | None = None) -> list[FileSeen]:
        found = []
        for mail in self._mails():
            body = mail.get_body(preferencelist=("plain",))
            caption = "\n".join((body.get_content() if body is not None else "").splitlines())
            for part in mail.iter_attachments():
                data = part.get_payload(decode=True) or b""
                found.append(FileSeen(str(part.get_filename()), data, caption))
        return found
