"""What the fake Bot API server records and how tests script its failures."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


class DropConnection(Exception):
    """Close the connection without answering (a fault mode, not a Bot API answer)."""


class ApiError(Exception):
    """A Bot API error answer: ``{"ok": false, "error_code": …, "description": …}``."""

    def __init__(
        self,
        error_code: int,
        description: str,
        retry_after: int | None = None,
        migrate_to_chat_id: int | None = None,
    ):
        super().__init__(description)
        self.error_code = error_code
        self.description = description
        self.retry_after = retry_after
        self.migrate_to_chat_id = migrate_to_chat_id

    def payload(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "ok": False,
            "error_code": self.error_code,
            "description": self.description,
        }
        parameters: dict[str, int] = {}
        if self.retry_after is not None:
            parameters["retry_after"] = self.retry_after
        if self.migrate_to_chat_id is not None:
            parameters["migrate_to_chat_id"] = self.migrate_to_chat_id
        if parameters:
            body["parameters"] = parameters
        return body


def bad_request(detail: str) -> ApiError:
    return ApiError(400, f"Bad Request: {detail}")


# Standing failures for a chat, with the Bot API's own wording.
CHAT_FAILURES: dict[str, tuple[int, str]] = {
    "blocked": (403, "Forbidden: bot was blocked by the user"),
    "kicked": (403, "Forbidden: bot was kicked from the group chat"),
    "deactivated": (403, "Forbidden: user is deactivated"),
    "not_found": (400, "Bad Request: chat not found"),
}


@dataclass
class Fault:
    """A one-shot (or `times`-shot) failure for the next matching call.

    ``drop=True`` closes the connection without answering (a network error for the
    client); otherwise the call answers ``error_code``/``description`` with
    ``parameters.retry_after`` (429) or ``parameters.migrate_to_chat_id`` (a group that
    became a supergroup) when set.
    """

    method: str
    error_code: int = 500
    description: str = "Internal Server Error"
    retry_after: int | None = None
    chat_id: int | None = None
    times: int = 1
    drop: bool = False
    migrate_to_chat_id: int | None = None

    def matches(self, method: str, chat_id: int | None) -> bool:
        if self.method.lower() != method.lower():
            return False
        return self.chat_id is None or self.chat_id == chat_id

    def error(self) -> ApiError:
        return ApiError(
            self.error_code, self.description, self.retry_after, self.migrate_to_chat_id
        )


@dataclass(frozen=True)
class Upload:
    """A file part of a multipart request."""

    filename: str
    data: bytes


@dataclass(frozen=True)
class InlineButton:
    text: str
    callback_data: str | None


@dataclass
class SentMessage:
    """A message the bot sent, as the server stored it (``text`` is the visible text)."""

    chat_id: int
    message_id: int
    text: str
    raw_text: str  # exactly as sent, markup included
    parse_mode: str | None
    reply_to_message_id: int | None
    message_thread_id: int | None
    reply_markup: dict[str, Any] | None
    date: int
    deleted: bool = False
    document: Upload | None = None  # sendDocument: the file (the caption is `text`)
    voice: Upload | None = None  # sendVoice: the audio (the caption is `text`)

    @property
    def buttons(self) -> list[list[InlineButton]]:
        """The inline keyboard as it is now (edits may have removed it)."""
        rows = (self.reply_markup or {}).get("inline_keyboard", [])
        return [
            [InlineButton(str(b.get("text", "")), b.get("callback_data")) for b in row]
            for row in rows
        ]


@dataclass(frozen=True)
class EditRecord:
    chat_id: int
    message_id: int
    text: str  # visible text after the edit
    raw_text: str
    parse_mode: str | None
    reply_markup: dict[str, Any] | None


@dataclass(frozen=True)
class ChatActionRecord:
    chat_id: int
    action: str
    message_thread_id: int | None


@dataclass(frozen=True)
class CallbackAnswer:
    callback_query_id: str
    text: str | None
    show_alert: bool


@dataclass(frozen=True)
class ApiCall:
    """Every Bot API call, in arrival order (answered or not)."""

    method: str
    params: dict[str, Any]
    error: str | None = None
    at: float = 0.0


@dataclass
class ChatInfo:
    chat_id: int
    type: str  # private | group | supergroup | channel
    title: str | None = None
    is_forum: bool = False
    threads: set[int] = field(default_factory=set)
    failure: str | None = None  # a key of CHAT_FAILURES
    migrated_to: int | None = None  # the supergroup this group became

    def as_json(self, user: dict[str, Any] | None = None) -> dict[str, Any]:
        chat: dict[str, Any] = {"id": self.chat_id, "type": self.type}
        if self.type == "private" and user is not None:
            chat["first_name"] = user.get("first_name", "")
            if user.get("username"):
                chat["username"] = user["username"]
        else:
            chat["title"] = self.title or f"Group {self.chat_id}"
        if self.is_forum:
            chat["is_forum"] = True
        return chat
