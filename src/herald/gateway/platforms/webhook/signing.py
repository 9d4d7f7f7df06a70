"""Webhook signatures: HMAC-SHA256 with the configured secret, hex, in
``X-Herald-Signature: sha256=<hex>``.

Without a timestamp the signature covers the raw request body. A sender that also
sends ``X-Herald-Timestamp: <unix seconds>`` signs ``"<timestamp>." + body`` instead
(as Stripe and Slack do): the timestamp is then authenticated, deliveries older (or
further in the future) than five minutes are refused, and the same signed delivery is
accepted only once inside that window.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from collections import OrderedDict

SIGNATURE_HEADER = "X-Herald-Signature"
TIMESTAMP_HEADER = "X-Herald-Timestamp"
MAX_AGE_SECONDS = 300
_PREFIX = "sha256="
_SEEN_LIMIT = 10_000


class SignatureError(Exception):
    """The delivery is not authentic (or is a replay); nothing may run."""


def signed_bytes(body: bytes, timestamp: str | None) -> bytes:
    return body if timestamp is None else timestamp.encode() + b"." + body


def sign(secret: str, body: bytes, timestamp: str | int | None = None) -> str:
    """The ``X-Herald-Signature`` value for `body` (what a sender computes)."""
    stamp = None if timestamp is None else str(timestamp)
    digest = hmac.new(secret.encode(), signed_bytes(body, stamp), hashlib.sha256).hexdigest()
    return _PREFIX + digest


class SignatureVerifier:
    def __init__(self, secret: str, *, max_age: float = MAX_AGE_SECONDS) -> None:
        self._secret = secret.encode()
        self.max_age = max_age
        self._seen: OrderedDict[str, float] = OrderedDict()  # signature -> expiry

    def verify(
        self, body: bytes, signature: str | None, timestamp: str | None, *, now: float | None = None
    ) -> None:
        """Raise `SignatureError` saying what is wrong; return when authentic and fresh."""
        if not signature:
            raise SignatureError(f"missing {SIGNATURE_HEADER} header (sha256=<hex HMAC>)")
        given = signature.strip()
        if not given.lower().startswith(_PREFIX):
            raise SignatureError(f"{SIGNATURE_HEADER} must look like sha256=<hex HMAC>")
        stamp = timestamp.strip() if timestamp is not None else None
        expected = hmac.new(self._secret, signed_bytes(body, stamp), hashlib.sha256).hexdigest()
        if not hmac.compare_digest(given[len(_PREFIX) :].lower().encode(), expected.encode()):
            raise SignatureError("signature does not match the body")
        if stamp is None:
            return
        current = time.time() if now is None else now
        try:
            sent = int(stamp)
        except ValueError:
            raise SignatureError(f"{TIMESTAMP_HEADER} must be Unix seconds") from None
        age = current - sent
        if abs(age) > self.max_age:
            raise SignatureError(
                f"timestamp is {int(age)} s {'old' if age > 0 else 'in the future'}; "
                f"deliveries more than {int(self.max_age)} s away are refused as replays"
            )
        self._remember(expected, current)

    def _remember(self, digest: str, now: float) -> None:
        while self._seen and next(iter(self._seen.values())) < now:
            self._seen.popitem(last=False)
        if digest in self._seen:
            raise SignatureError("this signed delivery was already accepted (replay)")
        self._seen[digest] = now + 2 * self.max_age
        if len(self._seen) > _SEEN_LIMIT:
            self._seen.popitem(last=False)
