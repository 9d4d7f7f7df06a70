"""Reading one mail: who it is from and to, which thread it belongs to, its text.

Everything here is a pure function of the message bytes and the platform config, so
the rules (which mail is Herald's, which sender is allowed and authenticated, what
the thread is) are tested without a server.
"""

from __future__ import annotations

import email.policy
import hashlib
import re
from dataclasses import dataclass, field
from email.message import EmailMessage
from email.parser import BytesParser
from email.utils import getaddresses, parseaddr

from herald.config.schema_email import EmailPlatformConfig

_MSGID_RE = re.compile(r"<[^<>\s]+>")
_AUTH_RESULT_RE = re.compile(r"\b(dmarc|dkim|spf)\s*=\s*(\w+)((?:\s+[\w.]+=[^\s;]+)*)", re.I)
_PROP_RE = re.compile(r"([\w.]+)=([^\s;]+)")
_APPROVAL_RE = re.compile(
    r"(?i)^\s*(approve|deny)\s+([0-9A-Fa-f]{4,8})(?:\s+(session|always))?\s*$"
)


@dataclass(frozen=True)
class Attachment:
    filename: str
    content_type: str
    data: bytes


@dataclass(frozen=True)
class InboundMail:
    sender: str  # the From address, lower-cased
    sender_name: str
    recipients: tuple[str, ...]  # To, Cc and Delivered-To, lower-cased
    message_id: str
    in_reply_to: str | None
    references: tuple[str, ...]
    subject: str
    text: str
    attachments: tuple[Attachment, ...] = ()
    skipped_attachments: tuple[str, ...] = ()  # over the size limit
    auth_results: tuple[str, ...] = field(default=(), repr=False)

    @property
    def thread_root(self) -> str:
        """The thread's first message: the first of References, else what this one
        answers, else this message itself. A thread is one session."""
        if self.references:
            return self.references[0]
        return self.in_reply_to or self.message_id


def parse_mail(raw: bytes, *, max_attachment_bytes: int) -> InboundMail:
    msg = BytesParser(policy=email.policy.default).parsebytes(raw)
    assert isinstance(msg, EmailMessage)
    name, sender = parseaddr(str(msg.get("From", "")))
    recipients = [
        addr.lower()
        for _, addr in getaddresses(
            [str(v) for key in ("To", "Cc", "Delivered-To") for v in msg.get_all(key, [])]
        )
        if addr
    ]
    references = tuple(_MSGID_RE.findall(str(msg.get("References", ""))))
    in_reply = _MSGID_RE.findall(str(msg.get("In-Reply-To", "")))
    own_id = _MSGID_RE.findall(str(msg.get("Message-ID", "")))
    attachments: list[Attachment] = []
    skipped: list[str] = []
    for part in msg.iter_attachments():
        filename = part.get_filename() or "attachment"
        data = part.get_payload(decode=True) or b""
        if len(data) > max_attachment_bytes:
            skipped.append(f"{filename} ({len(data) // 1024} KB)")
            continue
        attachments.append(Attachment(filename, part.get_content_type(), data))
    return InboundMail(
        sender=sender.lower(),
        sender_name=name,
        recipients=tuple(dict.fromkeys(recipients)),
        message_id=own_id[0]
        if own_id
        else f"<{hashlib.sha256(raw).hexdigest()[:24]}@no-id.herald>",
        in_reply_to=in_reply[0] if in_reply else None,
        references=references,
        subject=str(msg.get("Subject", "")).strip(),
        text=_body_text(msg),
        attachments=tuple(attachments),
        skipped_attachments=tuple(skipped),
        auth_results=tuple(str(v) for v in msg.get_all("Authentication-Results", [])),
    )


def _body_text(msg: EmailMessage) -> str:
    plain = msg.get_body(preferencelist=("plain",))
    if plain is not None and str(plain.get_content()).strip():
        return strip_quoted(plain.get_content())
    html = msg.get_body(preferencelist=("html",))
    if html is None:
        return ""
    from herald.tools.web.html_text import html_to_markdown

    _, content = html_to_markdown(html.get_content(), "")
    return strip_quoted(content)


def strip_quoted(text: str) -> str:
    """The new text of a reply: the quoted history below it ("On … wrote:" and the
    "> " lines) is what the session already holds."""
    lines = text.replace("\r\n", "\n").split("\n")
    out: list[str] = []
    for i, line in enumerate(lines):
        if line.startswith(">"):
            break
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if re.match(r"^On .{3,200} wrote:\s*$", line) and (not nxt or nxt.startswith(">")):
            break
        out.append(line)
    return "\n".join(out).strip()


def _norm(address: str) -> str:
    local, _, domain = address.lower().partition("@")
    return f"{local.split('+', 1)[0]}@{domain}"


def addressed_to_herald(mail: InboundMail, config: EmailPlatformConfig) -> bool:
    """To Herald's address (any +tag of it) or one of its aliases."""
    own = {_norm(a) for a in [config.address or "", *config.aliases] if a}
    return any(_norm(r) in own for r in mail.recipients)


def sender_allowed(mail: InboundMail, config: EmailPlatformConfig) -> bool:
    sender = mail.sender
    for entry in config.allowed_users:
        entry = entry.strip().lower()
        if entry == "*" or entry == sender:
            return True
        if entry.startswith("@") and sender.endswith(entry):
            return True
    return False


def sender_authenticated(mail: InboundMail, config: EmailPlatformConfig) -> bool:
    """The receiving server vouches for the From domain: DMARC passed, or DKIM with
    that domain's signature or SPF for that domain passed. Only the topmost
    Authentication-Results header counts (the one the owner's provider added; anything
    below it came with the message), and when `auth_server` is set it must be that
    server's."""
    if config.sender_auth == "off":
        return True
    if not mail.auth_results:
        return False
    top = mail.auth_results[0]
    if config.auth_server:
        server = top.split(";", 1)[0].strip().split()[0] if top.strip() else ""
        if server.lower() != config.auth_server.lower():
            return False
    domain = mail.sender.rpartition("@")[2]
    for method, result, props in _AUTH_RESULT_RE.findall(top):
        if result.lower() != "pass":
            continue
        values = {k.lower(): v.lower().strip("<>") for k, v in _PROP_RE.findall(props)}
        if method.lower() == "dmarc":
            if values.get("header.from", domain) == domain:
                return True
        elif method.lower() == "dkim":
            if values.get("header.d") == domain or values.get("header.i", "").endswith(
                "@" + domain
            ):
                return True
        elif method.lower() == "spf":
            mailfrom = values.get("smtp.mailfrom", "")
            if mailfrom.rpartition("@")[2] == domain:
                return True
    return False


def approval_reply(text: str) -> tuple[str, str, str | None] | None:
    """(approve|deny, code, scope) when the reply's first line answers an approval."""
    first = next((line for line in text.splitlines() if line.strip()), "")
    m = _APPROVAL_RE.match(first)
    if m is None:
        return None
    return m.group(1).lower(), m.group(2).upper(), (m.group(3) or "").lower() or None


__all__ = [
    "Attachment",
    "InboundMail",
    "addressed_to_herald",
    "approval_reply",
    "parse_mail",
    "sender_allowed",
    "sender_authenticated",
    "strip_quoted",
]
