"""Which mail becomes a turn, and how a thread is found: the email entrance's rules on
messages built here (no server needed)."""

from __future__ import annotations

from email.message import EmailMessage

import pytest

from herald.config.schema_email import EmailPlatformConfig
from herald.gateway.platforms.email import EmailConfigError, check_config
from herald.gateway.platforms.email.mail import (
    addressed_to_herald,
    approval_reply,
    parse_mail,
    sender_allowed,
    sender_authenticated,
    strip_quoted,
)

CONFIG = EmailPlatformConfig(
    enabled=True,
    address="herald@example.org",
    aliases=["assistant@example.org"],
    allowed_users=["owner@example.org", "@family.example"],
    password="x",
    imap_host="imap.example.org",
    smtp_host="smtp.example.org",
)


def _mail(
    *,
    frm: str = "Owner <owner@example.org>",
    to: str = "herald@example.org",
    cc: str | None = None,
    auth: list[str] | None = None,
    html: str | None = None,
    body: str = "hello",
    headers: dict[str, str] | None = None,
) -> bytes:
    msg = EmailMessage()
    for value in auth or []:
        msg["Authentication-Results"] = value
    msg["From"] = frm
    msg["To"] = to
    if cc:
        msg["Cc"] = cc
    msg["Subject"] = "Plans"
    msg["Message-ID"] = "<m1@example.org>"
    for k, v in (headers or {}).items():
        msg[k] = v
    msg.set_content(body)
    if html:
        msg.add_alternative(html, subtype="html")
    return bytes(msg)


def _parse(raw: bytes):
    return parse_mail(raw, max_attachment_bytes=1024)


@pytest.mark.parametrize(
    "to,cc,expected",
    [
        ("herald@example.org", None, True),
        ("Herald <HERALD@Example.org>", None, True),  # case
        ("herald+travel@example.org", None, True),  # a plus tag
        ("assistant@example.org", None, True),  # an alias
        ("someone@example.org", "herald@example.org", True),  # in Cc
        ("someone@example.org", None, False),
        ("herald@example.org.evil", None, False),  # a look-alike domain
        ("xherald@example.org", None, False),
        ("herald@sub.example.org", None, False),
    ],
)
def test_only_mail_to_herald_counts(to: str, cc: str | None, expected: bool) -> None:
    assert addressed_to_herald(_parse(_mail(to=to, cc=cc)), CONFIG) is expected


@pytest.mark.parametrize(
    "sender,expected",
    [
        ("owner@example.org", True),
        ("OWNER@EXAMPLE.ORG", True),
        ("kid@family.example", True),  # @domain entry
        ("kid@evilfamily.example", False),  # not the same domain
        ("owner@example.org.evil", False),
        ("stranger@example.org", False),
    ],
)
def test_allowed_senders(sender: str, expected: bool) -> None:
    assert sender_allowed(_parse(_mail(frm=sender)), CONFIG) is expected


@pytest.mark.parametrize(
    "results,expected",
    [
        (["mx.example.org; dmarc=pass header.from=example.org"], True),
        (["mx.example.org; dkim=pass header.d=example.org; spf=fail"], True),
        (["mx.example.org; spf=pass smtp.mailfrom=owner@example.org"], True),
        (["mx.example.org; dkim=pass header.d=evil.example"], False),  # someone else's key
        (["mx.example.org; spf=pass smtp.mailfrom=bounce@evil.example"], False),
        (["mx.example.org; dmarc=fail header.from=example.org"], False),
        ([], False),  # nothing vouches for the sender
        # a header the sender wrote themselves sits below the provider's: only the top counts
        (
            [
                "mx.example.org; dmarc=fail header.from=example.org",
                "mx.example.org; dmarc=pass header.from=example.org",
            ],
            False,
        ),
    ],
)
def test_a_forged_from_is_not_believed(results: list[str], expected: bool) -> None:
    assert sender_authenticated(_parse(_mail(auth=results)), CONFIG) is expected


def test_auth_server_pins_whose_header_counts() -> None:
    pinned = CONFIG.model_copy(update={"auth_server": "mx.example.org"})
    good = _parse(_mail(auth=["mx.example.org; dmarc=pass header.from=example.org"]))
    other = _parse(_mail(auth=["attacker.example; dmarc=pass header.from=example.org"]))
    assert sender_authenticated(good, pinned)
    assert not sender_authenticated(other, pinned)


def test_sender_auth_off_trusts_the_from_line() -> None:
    off = CONFIG.model_copy(update={"sender_auth": "off"})
    assert sender_authenticated(_parse(_mail()), off)


def test_thread_root_is_the_first_reference() -> None:
    first = _parse(_mail())
    assert first.thread_root == "<m1@example.org>"
    reply = _parse(
        _mail(headers={"In-Reply-To": "<r1@h>", "References": "<m0@example.org> <r1@h>"})
    )
    assert reply.thread_root == "<m0@example.org>"
    only_reply_to = _parse(_mail(headers={"In-Reply-To": "<r1@h>"}))
    assert only_reply_to.thread_root == "<r1@h>"


def test_html_mail_reaches_the_model_as_text() -> None:
    mail = _parse(_mail(body="", html="<p>Book <b>two</b> seats</p><script>x()</script>"))
    assert "two" in mail.text and "<b>" not in mail.text and "x()" not in mail.text


def test_html_only_mail() -> None:
    msg = EmailMessage()
    msg["From"] = "owner@example.org"
    msg["To"] = "herald@example.org"
    msg.set_content("<h1>Hi</h1><p>there</p>", subtype="html")
    assert "there" in _parse(bytes(msg)).text


def test_quoted_history_is_left_out() -> None:
    text = "Yes please.\n\nOn Mon, 1 Dec 2026 at 10:00, Herald <h@x> wrote:\n> Shall I?\n> ok"
    assert strip_quoted(text) == "Yes please."
    assert strip_quoted("a\n> b\nc") == "a"
    assert strip_quoted("On the whole I agree.\nMore.") == "On the whole I agree.\nMore."


def test_attachments_over_the_limit_are_reported_not_kept() -> None:
    msg = EmailMessage()
    msg["From"] = "owner@example.org"
    msg["To"] = "herald@example.org"
    msg.set_content("see attached")
    msg.add_attachment(b"x" * 10, maintype="text", subtype="plain", filename="small.txt")
    msg.add_attachment(b"y" * 5000, maintype="application", subtype="pdf", filename="big.pdf")
    mail = _parse(bytes(msg))
    assert [a.filename for a in mail.attachments] == ["small.txt"]
    assert mail.skipped_attachments and "big.pdf" in mail.skipped_attachments[0]


@pytest.mark.parametrize(
    "text,expected",
    [
        ("approve 3F2A", ("approve", "3F2A", None)),
        ("  Approve 3f2a session\n\nthanks", ("approve", "3F2A", "session")),
        ("deny 3F2A", ("deny", "3F2A", None)),
        ("\n\napprove 3F2A always", ("approve", "3F2A", "always")),
        ("I approve 3F2A", None),  # not the first words
        ("approve", None),
        ("approve 3F2A everything", None),
        ("approve ZZZZ", None),
    ],
)
def test_approval_replies(text: str, expected: tuple | None) -> None:
    assert approval_reply(text) == expected


def test_config_errors_name_the_setting() -> None:
    with pytest.raises(EmailConfigError, match="clear text"):
        check_config(CONFIG.model_copy(update={"imap_security": "none"}))
    with pytest.raises(EmailConfigError, match="allowed_users"):
        check_config(CONFIG.model_copy(update={"allowed_users": []}))
    with pytest.raises(EmailConfigError, match="imap_host"):
        check_config(CONFIG.model_copy(update={"imap_host": None}))
    check_config(
        CONFIG.model_copy(
            update={"imap_security": "none", "smtp_security": "none", "imap_host": "127.0.0.1",
                    "smtp_host": "localhost"}
        )
    )  # fmt: skip


@pytest.mark.parametrize(
    "name,expected",
    [
        ("report.pdf", "report.pdf"),
        ("../../.ssh/authorized_keys", "authorized_keys"),
        ("..", "fallback"),
        (".bashrc", "bashrc"),
        ("C:\\Users\\x\\evil.exe", "evil.exe"),
        ("<abc/def@host>", "def_host_"),
        ("a b;rm -rf ~.txt", "a_b_rm_-rf_.txt"),
        ("", "fallback"),
    ],
)
def test_sender_chosen_names_cannot_leave_the_attachments_folder(name: str, expected: str) -> None:
    from herald.gateway.platforms.email.adapter import safe_name

    assert safe_name(name, "fallback") == expected


def test_the_silence_limit_follows_idle_seconds_and_its_slack(tmp_path) -> None:
    from pydantic import ValidationError

    from herald.gateway.platforms.email.adapter import EmailAdapter

    def limit(**keys: object) -> float | None:
        config = CONFIG.model_copy(update=keys)
        adapter = EmailAdapter(
            config, "x", state_path=tmp_path / "e.json", attachments_dir=tmp_path / "a"
        )
        return adapter.expected_rhythm().silence_limit

    assert limit() == 300 + 90  # IDLE renewed every five minutes, ninety seconds' grace
    assert limit(idle_seconds=1.0, silence_slack_seconds=2.0) == 3.0
    assert limit(idle=False, poll_seconds=60.0, idle_seconds=1.0) == 60 + 90
    for key, value in [
        ("idle_seconds", 0.5),
        ("idle_seconds", 30 * 60),
        ("silence_slack_seconds", -1),
    ]:
        with pytest.raises(ValidationError, match=key):
            EmailPlatformConfig(**{key: value})
