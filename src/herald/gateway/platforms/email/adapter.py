"""The email entrance: one IMAP folder in (IDLE, or polling), SMTP out.

What it touches on the server: it reads every new message with ``BODY.PEEK`` (which
sets no flag), and only a message addressed to Herald, from an allowed and (by
default) authenticated sender, becomes a turn; that one, and only that one, is then
marked ``\\Seen``. Everything else in the folder stays exactly as it was.

A thread is a session: the thread's root Message-ID is the event's thread id, and
replies carry ``In-Reply-To`` and ``References`` so mail clients keep them together.
Approvals go out with a short code (``approve 3F2A`` / ``deny 3F2A``); a reply whose
first line names a pending code is handed to the gateway as that button's command,
and a code that is not pending is refused with a sentence saying so.

Where it stands across restarts (the folder's UIDVALIDITY and the last UID seen, the
threads' headers, the pending approval codes) lives in ``<home>/gateway/email.json``.
Each mail taken is recorded in the gateway's inbound ledger by its Message-ID before
it is answered, so a mail is answered at most once, even if it is read again.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import secrets
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from pathlib import Path
from typing import Any

from herald.config.schema_email import EmailPlatformConfig
from herald.gateway.aio import end_task
from herald.gateway.contracts import (
    Button,
    EventSink,
    InboundFile,
    MessageEvent,
    OutgoingFile,
    PlatformAdapter,
    SendResult,
)
from herald.gateway.health import Rhythm
from herald.gateway.media import receive_file
from herald.gateway.platforms.email.mail import (
    InboundMail,
    addressed_to_herald,
    approval_reply,
    parse_mail,
    sender_allowed,
    sender_authenticated,
)

log = logging.getLogger(__name__)

MAX_THREADS_KEPT = 500
_UIDVALIDITY_RE = re.compile(rb"UIDVALIDITY (\d+)")
_UIDNEXT_RE = re.compile(rb"UIDNEXT (\d+)")
_CHOICE_WORDS = {"/approve": "", "/approve session": "session", "/approve always": "always"}


@dataclass
class _Thread:
    subject: str
    references: list[str]
    last_id: str


class EmailAdapter(PlatformAdapter):
    name = "email"
    push_replies = True

    def __init__(
        self,
        config: EmailPlatformConfig,
        password: str,
        *,
        state_path: Path,
        attachments_dir: Path,
        reconnect_max: float = 300.0,
    ) -> None:
        if not config.address:
            raise ValueError("gateway.platforms.email.address is not set (Herald's own address)")
        self.config = config
        self._password = password
        self._user = config.username or config.address
        self._state_path = state_path
        self._attachments_dir = attachments_dir
        self._reconnect_max = reconnect_max
        self._sink: EventSink | None = None
        self._task: asyncio.Task[None] | None = None
        self._dispatches: set[asyncio.Task[None]] = set()
        self._wake = asyncio.Event()
        self._stopping = False
        self._client: Any = None
        self._state = self._load_state()
        self.connected = asyncio.Event()  # set once the folder is selected (tests, status)

    # ---- lifecycle --------------------------------------------------------------------

    async def connect(self, sink: EventSink) -> None:
        if self._task is not None:
            raise RuntimeError("the email adapter is already connected")
        self._sink = sink
        self._stopping = False
        self._task = asyncio.create_task(self._run(), name="email-imap")

    async def reconnect(self, sink: EventSink) -> None:
        """A fresh IMAP session; turns in flight keep running and reply by SMTP."""
        self.health.reconnecting("opening a new IMAP session")
        await self._stop_receiving()
        self._sink = sink
        self._stopping = False
        self._task = asyncio.create_task(self._run(), name="email-imap")

    def expected_rhythm(self) -> Rhythm:
        # IDLE is renewed every idle_seconds; each renewal, or a push before it, is a
        # sign of life, so a link that went quiet is noticed within that plus the slack.
        every = self.config.idle_seconds if self.config.idle else self.config.poll_seconds
        return Rhythm.long_poll(every, self.config.silence_slack_seconds)

    async def disconnect(self) -> None:
        await self._stop_receiving()
        if self._dispatches:
            await asyncio.wait(set(self._dispatches), timeout=10)
        self.health.stopped()

    async def _stop_receiving(self) -> None:
        self._stopping = True
        self._wake.set()
        client = self._client
        if client is not None:
            with contextlib.suppress(Exception):
                if client.has_pending_idle():
                    client.idle_done()
        task, self._task = self._task, None
        if task is not None:
            await end_task(task)

    # ---- capabilities -----------------------------------------------------------------

    def max_message_length(self, chat_id: str) -> int:
        return 100_000

    def supports_buttons(self) -> bool:
        return True  # rendered as reply codes

    def supports_threads(self) -> bool:
        return True

    # ---- output -----------------------------------------------------------------------

    def supports_files(self) -> bool:
        return True

    async def send(
        self,
        chat_id: str,
        text: str,
        *,
        reply_to: str | None = None,
        thread_id: str | None = None,
        buttons: list[list[Button]] | None = None,
    ) -> SendResult:
        if buttons:
            text = f"{text}\n\n{self._approval_lines(chat_id, thread_id, buttons)}"
        msg, thread = self._reply(chat_id, reply_to, thread_id)
        msg.set_content(text)
        return await self._submit(msg, thread)

    async def send_file(
        self,
        chat_id: str,
        file: OutgoingFile,
        *,
        caption: str | None = None,
        reply_to: str | None = None,
        thread_id: str | None = None,
    ) -> SendResult:
        """A reply in the thread with the file attached; the caption is its text."""
        msg, thread = self._reply(chat_id, reply_to, thread_id)
        msg.set_content(caption or f"Attached: {file.name}")
        maintype, _, subtype = file.mime.partition("/")
        msg.add_attachment(
            file.data,
            maintype=maintype or "application",
            subtype=subtype or "octet-stream",
            filename=file.name,
        )
        return await self._submit(msg, thread)

    def _reply(
        self, chat_id: str, reply_to: str | None, thread_id: str | None
    ) -> tuple[EmailMessage, _Thread | None]:
        """A new message to `chat_id`, threaded under `thread_id` when Herald knows it."""
        thread = self._thread(thread_id) if thread_id else None
        msg = EmailMessage()
        msg["From"] = self.config.address
        msg["To"] = chat_id
        subject = thread.subject if thread else "Herald"
        msg["Subject"] = subject if subject.lower().startswith("re:") else f"Re: {subject}"
        msg["Date"] = formatdate(localtime=True)
        domain = str(self.config.address).rpartition("@")[2] or "herald.local"
        msg["Message-ID"] = make_msgid(domain=domain)
        if thread is not None:
            answered = reply_to if reply_to and reply_to.startswith("<") else thread.last_id
            msg["In-Reply-To"] = answered
            msg["References"] = " ".join(dict.fromkeys([*thread.references, answered]))
        return msg, thread

    async def _submit(self, msg: EmailMessage, thread: _Thread | None) -> SendResult:
        import aiosmtplib

        message_id = str(msg["Message-ID"])
        security = self.config.smtp_security
        try:
            await aiosmtplib.send(
                msg,
                hostname=self.config.smtp_host,
                port=self.config.smtp_port,
                username=self._user,
                password=self._password,
                use_tls=security == "tls",
                start_tls=security == "starttls",
                timeout=60,
            )
        except aiosmtplib.SMTPRecipientsRefused as exc:
            return SendResult(ok=False, permanent_failure=True, error=f"recipient refused: {exc}")
        except (aiosmtplib.SMTPException, OSError) as exc:
            self.health.error(f"SMTP: {exc}")
            return SendResult(ok=False, error=f"SMTP: {exc}")
        self.health.sent()
        if thread is not None:
            thread.references = [*thread.references, message_id][-20:]
            self._save_state()
        return SendResult(ok=True, message_ids=[message_id])

    def _approval_lines(
        self, chat_id: str, thread_id: str | None, buttons: list[list[Button]]
    ) -> str:
        code = secrets.token_hex(2).upper()
        pending = self._state.setdefault("pending", {})
        pending[code] = {
            "chat": chat_id,
            "thread": thread_id,
            "choices": {b.data: b.label for row in buttons for b in row},
        }
        # the newest few only: an old code is as good as answered
        for old in list(pending)[:-20]:
            pending.pop(old, None)
        self._save_state()
        lines = ["To answer, reply with one line:"]
        for data in pending[code]["choices"]:
            if data == "/deny":
                lines.append(f"    deny {code}")
            elif data in _CHOICE_WORDS:
                lines.append(f"    approve {code} {_CHOICE_WORDS[data]}".rstrip())
        return "\n".join(lines)

    # ---- input ------------------------------------------------------------------------

    async def _run(self) -> None:
        backoff = 1.0
        while not self._stopping:
            try:
                await self._session()
                backoff = 1.0
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a dropped connection, a refused login: retry
                if self.connected.is_set():  # that link worked: older failures are over
                    backoff = 1.0
                self.connected.clear()
                self.health.error(f"IMAP: {exc}")
                log.warning("email: IMAP session ended (%s); again in %.0f s", exc, backoff)
                await self._sleep(backoff)
                backoff = min(backoff * 2, self._reconnect_max)

    async def _sleep(self, seconds: float) -> None:
        self._wake.clear()
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._wake.wait(), seconds)

    async def _session(self) -> None:
        """One IMAP session, until it fails. aioimaplib does not fail what is waiting
        when the server closes the connection (an IDLE would wait out its renewal, a
        greeting its timeout), so the session races the connection's end."""
        import aioimaplib

        c = self.config
        lost: asyncio.Future[Exception | None] = asyncio.get_running_loop().create_future()

        def on_lost(exc: Exception | None) -> None:
            if not lost.done():
                lost.set_result(exc)

        kind = aioimaplib.IMAP4_SSL if c.imap_security == "tls" else aioimaplib.IMAP4
        client = kind(host=c.imap_host, port=c.imap_port, timeout=60, conn_lost_cb=on_lost)
        heard = _LastLine(client.protocol)
        self._client = client
        talk = asyncio.ensure_future(self._converse(client))
        try:
            await asyncio.wait({talk, lost}, return_when=asyncio.FIRST_COMPLETED)
            if not talk.done():
                said = f" after: {heard.line}" if heard.line else ""
                raise ConnectionError(f"the server closed the connection{said}")
            talk.result()
        finally:
            self._client = None
            await end_task(talk)
            if not lost.done():
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(client.logout(), 5)

    async def _converse(self, client: Any) -> None:
        c = self.config
        await client.wait_hello_from_server()
        login = await client.login(self._user, self._password)
        if login.result != "OK":
            raise ConnectionError("IMAP login refused (check username and password)")
        selected = await client.select(c.folder)
        if selected.result != "OK":
            raise ConnectionError(f"IMAP folder {c.folder!r} cannot be selected")
        self._start_point(selected.lines)
        self.connected.set()
        self.health.connected()
        while not self._stopping:
            await self._fetch_new(client)
            self.health.received()  # the folder answered: the link is alive
            if c.idle:
                idle = await client.idle_start(timeout=c.idle_seconds)
                await client.wait_server_push(timeout=c.idle_seconds + 60)
                client.idle_done()
                await asyncio.wait_for(idle, 60)
            else:
                await self._sleep(c.poll_seconds)

    def _start_point(self, lines: list[Any]) -> None:
        """Where to read from: after the last UID seen, unless the folder was recreated
        (another UIDVALIDITY) or this is the first start; then from the next new mail,
        so mail that was in the box before Herald came is not answered."""
        blob = b" ".join(bytes(x) for x in lines)
        validity = _UIDVALIDITY_RE.search(blob)
        uidnext = _UIDNEXT_RE.search(blob)
        current = int(validity.group(1)) if validity else 0
        if self._state.get("uidvalidity") != current:
            self._state["uidvalidity"] = current
            self._state["last_uid"] = (int(uidnext.group(1)) - 1) if uidnext else 0
            self._save_state()

    async def _fetch_new(self, client: Any) -> None:
        last = int(self._state.get("last_uid", 0))
        found = await client.uid_search(f"UID {last + 1}:*", charset=None)
        uids: list[int] = []
        for line in found.lines:
            words = bytes(line).split()
            if words[:1] == [b"SEARCH"]:
                words = words[1:]
            if words and all(w.isdigit() for w in words):
                uids += [int(u) for u in words if int(u) > last]  # `N:*` can list one below N
        try:
            for uid in sorted(set(uids)):
                header = await client.uid("fetch", str(uid), "(BODY.PEEK[HEADER])")
                mail = parse_mail(_literal(header.lines), max_attachment_bytes=0)
                self._state["last_uid"] = uid
                # The inbound ledger, not the cursor, makes a mail answered once: it is
                # recorded there before it is answered, so a crash that loses the cursor
                # only means some headers are read again.
                if (
                    not self._wanted(mail)
                    or self.record_event(self._sink, mail.message_id) == "seen"
                ):
                    continue
                body = await client.uid("fetch", str(uid), "(BODY.PEEK[])")
                limit = int(self.config.max_attachment_mb * 1024 * 1024)
                full = parse_mail(_literal(body.lines), max_attachment_bytes=limit)
                await client.uid("store", str(uid), "+FLAGS.SILENT", "(\\Seen)")
                self._accept(full)
        finally:
            if int(self._state.get("last_uid", 0)) != last:
                self._save_state()  # the read cursor, once per batch

    def _wanted(self, mail: InboundMail) -> bool:
        if not addressed_to_herald(mail, self.config):
            return False
        if mail.sender == str(self.config.address).lower():
            return False  # its own mail (a copy of a reply)
        if not sender_allowed(mail, self.config):
            log.info("email: ignored mail from %s (not in allowed_users)", mail.sender)
            return False
        if not sender_authenticated(mail, self.config):
            log.warning(
                "email: ignored mail claiming to be from %s: the receiving server did not"
                " authenticate that sender (see gateway.platforms.email.sender_auth)",
                mail.sender,
            )
            return False
        return True

    def _accept(self, mail: InboundMail) -> None:
        root = mail.thread_root
        thread = self._thread(root)
        if thread is None:
            thread = _Thread(mail.subject or "(no subject)", [root], mail.message_id)
        thread.references = list(dict.fromkeys([*thread.references, mail.message_id]))[-20:]
        thread.last_id = mail.message_id
        self._remember_thread(root, thread)
        text = mail.text
        answer = approval_reply(text)
        if answer is not None:
            command = self._approval_command(mail.sender, answer)
            if command is None:
                self._spawn_notice(
                    mail.sender,
                    root,
                    f"No approval with code {answer[1]} is waiting: it was answered, timed "
                    "out, or belongs to another conversation.",
                )
                return
            text = command
        elif mail.in_reply_to is None and mail.subject and not text.lstrip().startswith("/"):
            text = f"Subject: {mail.subject}\n\n{text}"
        files = self._save_attachments(mail)
        event = MessageEvent(
            platform=self.name,
            chat_id=mail.sender,
            user_id=mail.sender,
            text=text,
            chat_type="private",
            thread_id=root,
            message_id=mail.message_id,
            event_id=mail.message_id,
            user_name=None,  # a From name is whatever the sender types: never an identity
            media=tuple(
                f"attachment {s} left out: over max_attachment_mb" for s in mail.skipped_attachments
            ),
            files=files,
            raw=mail,
        )
        self.spawn_dispatch(self._sink, event, self._dispatches)

    def _approval_command(self, sender: str, answer: tuple[str, str, str | None]) -> str | None:
        verb, code, scope = answer
        pending = self._state.get("pending", {}).get(code)
        if pending is None or pending.get("chat") != sender:
            return None
        wanted = "/deny" if verb == "deny" else ("/approve " + scope if scope else "/approve")
        if wanted not in pending["choices"]:
            return None
        self._state["pending"].pop(code, None)
        self._save_state()
        return wanted

    def _save_attachments(self, mail: InboundMail) -> tuple[InboundFile, ...]:
        """The mail's attachments saved through the gateway's one inbound writer (no
        folders in the name, no link followed, nothing overwritten), for the runner: a
        photo becomes an image input, an audio file is transcribed. Only mail from an
        allowed, authenticated sender gets here (`_wanted`)."""
        if not mail.attachments:
            return ()
        folder = self._attachments_dir / safe_name(mail.message_id, "message")
        return tuple(
            receive_file(folder, part.filename, part.data, part.content_type)
            for part in mail.attachments
        )

    def _spawn_notice(self, to: str, thread_id: str, text: str) -> None:
        task = asyncio.create_task(self._notice(to, thread_id, text))
        self._dispatches.add(task)
        task.add_done_callback(self._dispatches.discard)

    async def _notice(self, to: str, thread_id: str, text: str) -> None:
        result = await self.send(to, text, thread_id=thread_id)
        if not result.ok:
            log.warning("email: notice to %s not sent: %s", to, result.error)

    # ---- state ------------------------------------------------------------------------

    def _thread(self, root: str | None) -> _Thread | None:
        data = self._state.get("threads", {}).get(root or "")
        return _Thread(**data) if data else None

    def _remember_thread(self, root: str, thread: _Thread) -> None:
        threads = self._state.setdefault("threads", {})
        threads.pop(root, None)
        threads[root] = {
            "subject": thread.subject,
            "references": thread.references,
            "last_id": thread.last_id,
        }
        for old in list(threads)[:-MAX_THREADS_KEPT]:
            threads.pop(old, None)
        self._save_state()

    def _load_state(self) -> dict[str, Any]:
        try:
            data = json.loads(self._state_path.read_text())
            return data if isinstance(data, dict) else {}
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            log.warning(
                "email: state file %s unreadable (%s); starting fresh", self._state_path, exc
            )
            return {}

    def _save_state(self) -> None:
        from herald.config.shared_file import atomic_write

        atomic_write(self._state_path, json.dumps(self._state, indent=1), default_mode=0o600)


class _LastLine:
    """The server's last BYE, kept to say why a connection ended (a server that turns
    a client away says so first: ``* BYE [UNAVAILABLE] ...``). Only BYE lines: other
    lines may be mail content, which has no place in a status file."""

    def __init__(self, protocol: Any) -> None:
        self.line = ""
        self._received = protocol.data_received
        protocol.data_received = self._seen
        self._welcome = protocol.welcome
        protocol.welcome = self._greeted

    async def _greeted(self, line: bytes) -> None:
        """aioimaplib reads a refused greeting in a task nobody awaits, whose error
        asyncio would log as a traceback: the session reports it instead."""
        import aioimaplib

        with contextlib.suppress(aioimaplib.Error):
            await self._welcome(line)

    def _seen(self, data: bytes) -> None:
        lines = [x for x in bytes(data).splitlines() if x.startswith(b"* BYE")]
        if lines:
            self.line = lines[-1][:160].decode("utf-8", "replace")
        self._received(data)


_UNSAFE_NAME_RE = re.compile(r"[^\w.+-]+")


def safe_name(name: str, fallback: str) -> str:
    """A file name a sender chose, made harmless: no folders, no leading dots (so no
    `..`, no hidden files), only word characters, dots, plus and minus."""
    cleaned = _UNSAFE_NAME_RE.sub("_", name.replace("\\", "/").rsplit("/", 1)[-1]).lstrip(".")
    return cleaned[:120] or fallback


def _literal(lines: list[Any]) -> bytes:
    """The message bytes of a FETCH response (aioimaplib hands literals over as
    bytearrays, the protocol lines as bytes)."""
    for line in lines:
        if isinstance(line, bytearray):
            return bytes(line)
    raise ConnectionError("the IMAP server answered FETCH without the message")


__all__ = ["EmailAdapter", "safe_name"]
