"""A real SMTP server for tests (aiosmtpd) that keeps every message it accepts.

It asks for a login (plain or login mechanism, over loopback without TLS) so the
client's authentication path is exercised, and it can refuse a recipient or fail
the next few deliveries to test retries.
"""

from __future__ import annotations

import email.policy
import threading
import time
from collections.abc import Callable
from email.message import EmailMessage
from email.parser import BytesParser
from typing import Any

from herald.testing.listener import free_port


class SmtpSink:
    def __init__(self, user: str = "herald@example.org", password: str = "smtp-pass") -> None:
        self.user = user
        self.password = password
        self.host = "127.0.0.1"
        self.port = 0
        self.messages: list[EmailMessage] = []
        self.fail_next = 0  # deliveries to answer with a temporary failure
        self.refused: set[str] = set()  # recipients refused for good
        self._lock = threading.Lock()
        self._controller: Any = None

    def start(self) -> SmtpSink:
        from aiosmtpd.controller import Controller
        from aiosmtpd.smtp import AuthResult, LoginPassword

        sink = self

        class Handler:
            async def handle_RCPT(self, server, session, envelope, address, options):
                if address.lower() in sink.refused:
                    return "550 5.1.1 no such user"
                envelope.rcpt_tos.append(address)
                return "250 OK"

            async def handle_DATA(self, server, session, envelope):
                with sink._lock:
                    if sink.fail_next > 0:
                        sink.fail_next -= 1
                        return "451 4.3.0 try again later"
                    parsed = BytesParser(policy=email.policy.default).parsebytes(envelope.content)
                    sink.messages.append(parsed)  # type: ignore[arg-type]
                return "250 Message accepted"

        def authenticator(server, session, envelope, mechanism, auth_data):
            ok = (
                isinstance(auth_data, LoginPassword)
                and auth_data.login.decode() == sink.user
                and auth_data.password.decode() == sink.password
            )
            return AuthResult(success=ok)

        self.port = free_port()
        self._controller = Controller(
            Handler(),
            hostname=self.host,
            port=self.port,
            authenticator=authenticator,
            auth_require_tls=False,
            auth_required=True,
        )
        self._controller.start()
        return self

    def stop(self) -> None:
        if self._controller is not None:
            self._controller.stop()
            self._controller = None

    def __enter__(self) -> SmtpSink:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def wait_for(
        self, predicate: Callable[[EmailMessage], bool], what: str, timeout: float = 30.0
    ) -> EmailMessage:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                found = next((m for m in self.messages if predicate(m)), None)
            if found is not None:
                return found
            time.sleep(0.05)
        raise AssertionError(f"no mail {what} within {timeout:.0f}s; got {self.summary()}")

    def summary(self) -> list[str]:
        with self._lock:
            return [f"{m['To']}: {m['Subject']}" for m in self.messages]


__all__ = ["SmtpSink"]
