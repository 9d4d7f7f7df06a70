"""The fake Bot API's world: chats, users, messages, the update queue and the records.

One re-entrant condition guards everything; handler threads wait on it (long polls)
and tests wait on it (for replies), and every change notifies it.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from herald.testing.fake_telegram.records import (
    ApiCall,
    CallbackAnswer,
    ChatActionRecord,
    ChatInfo,
    EditRecord,
    Fault,
    SentMessage,
)
from herald.testing.waiting import wait_on

T = TypeVar("T")

PHOTO_SIZES = ((90, 67), (320, 240))  # thumbnails Telegram adds below the full size


class FakeTelegramState:
    def __init__(self, token: str, bot_username: str, bot_id: int) -> None:
        self.token = token
        self.bot: dict[str, Any] = {
            "id": bot_id,
            "is_bot": True,
            "first_name": "Herald",
            "username": bot_username,
            "can_join_groups": True,
            "can_read_all_group_messages": False,
            "supports_inline_queries": False,
        }
        self.cond = threading.Condition(threading.RLock())
        self.stopping = False
        self.chats: dict[int, ChatInfo] = {}
        self.users: dict[int, dict[str, Any]] = {}
        self.messages: dict[tuple[int, int], dict[str, Any]] = {}  # every message, as JSON
        self.sent: list[SentMessage] = []
        self.edits: list[EditRecord] = []
        self.chat_actions: list[ChatActionRecord] = []
        self.callback_answers: list[CallbackAnswer] = []
        self.pending_callbacks: dict[str, tuple[int, int]] = {}  # id -> (chat, message)
        self.calls: list[ApiCall] = []
        self.commands: list[dict[str, Any]] = []
        self.faults: list[Fault] = []
        self.updates: list[dict[str, Any]] = []  # not yet confirmed by an offset
        self.allowed_updates: set[str] | None = None  # as the last getUpdates asked
        self.poll_generation = 0
        self.polls_served = 0
        # Fault modes (see FakeTelegramServer): polls that hang silent, a 5xx storm,
        # updates delivered again whatever offset the bot confirmed.
        self.silent_polls = False
        self.silence_epoch = 0  # bumped when silence ends: the hung polls are cut then
        self.storm: tuple[int, str, frozenset[str] | None] | None = None
        self.storm_hits = 0
        self.latency = 0.0  # seconds every call but getUpdates takes to answer
        self.replays: list[dict[str, Any]] = []
        self.history: dict[int, dict[str, Any]] = {}  # every update ever queued
        # Files users sent: file_id -> (file_path, bytes), served by getFile + /file/.
        self.files: dict[str, tuple[str, bytes]] = {}
        self.file_downloads: list[str] = []  # file paths the bot downloaded, in order
        self.polling: set[Any] = set()  # the sockets of long polls being answered
        self._update_ids = itertools.count(100_001)
        self._callback_ids = itertools.count(7_000_000_001)
        self._message_ids: dict[int, itertools.count[int]] = {}

    # ---- helpers (call with the lock held) -------------------------------------------------

    def notify(self) -> None:
        self.cond.notify_all()

    def next_message_id(self, chat_id: int) -> int:
        counter = self._message_ids.setdefault(chat_id, itertools.count(1))
        return next(counter)

    def chat_json(self, chat: ChatInfo) -> dict[str, Any]:
        return chat.as_json(self.users.get(chat.chat_id))

    def push_update(self, kind: str, payload: dict[str, Any]) -> int:
        update_id = next(self._update_ids)
        update = {"update_id": update_id, kind: payload}
        self.updates.append(update)
        self.history[update_id] = update
        self.notify()
        return update_id

    def take_fault(self, method: str, chat_id: int | None) -> Fault | None:
        for fault in self.faults:
            if fault.matches(method, chat_id):
                fault.times -= 1
                if fault.times <= 0:
                    self.faults.remove(fault)
                return fault
        return None

    def keep_file(self, file_id: str, path: str, data: bytes) -> str:
        """Make `data` downloadable as `file_id` (getFile answers a unique file_path)."""
        folder, _, name = path.rpartition("/")
        self.files[file_id] = (f"{folder}/{file_id}-{name}", data)
        return file_id

    def find_sent(self, chat_id: int, message_id: int) -> SentMessage | None:
        for message in self.sent:
            if message.chat_id == chat_id and message.message_id == message_id:
                return message
        return None

    # ---- test-side inbound traffic ---------------------------------------------------------

    def ensure_user(
        self, user_id: int, username: str | None, first_name: str | None
    ) -> dict[str, Any]:
        user = self.users.get(user_id) or {
            "id": user_id,
            "is_bot": False,
            "first_name": first_name or f"User{user_id}",
            "language_code": "en",
        }
        if first_name:
            user["first_name"] = first_name
        if username:
            user["username"] = username
        self.users[user_id] = user
        return user

    def ensure_chat(
        self, chat_id: int, chat_type: str, title: str | None, thread_id: int | None
    ) -> ChatInfo:
        chat = self.chats.get(chat_id)
        if chat is None:
            chat = ChatInfo(chat_id, chat_type, title=title)
            self.chats[chat_id] = chat
        elif chat.type != chat_type:
            raise ValueError(f"chat {chat_id} is a {chat.type}, not a {chat_type}")
        if title:
            chat.title = title
        if thread_id is not None:
            chat.is_forum = True
            chat.threads.add(thread_id)
        return chat

    def user_message(
        self,
        chat_id: int,
        user_id: int,
        text: str,
        *,
        chat_type: str,
        thread_id: int | None,
        username: str | None,
        first_name: str | None,
        title: str | None,
        reply_to: int | None,
        photo: tuple[int, int] | None,
        document: tuple[str, str, int] | None,
        photo_data: bytes | None = None,
        voice: bytes | None = None,
        document_data: bytes | None = None,
    ) -> int:
        if chat_type not in ("private", "group", "supergroup"):
            raise ValueError(f"chat_type must be private, group or supergroup, not {chat_type!r}")
        if chat_type == "private" and chat_id != user_id:
            raise ValueError("in a private chat the chat id is the user's id")
        if thread_id is not None and chat_type != "supergroup":
            raise ValueError("forum topics (thread_id) exist only in supergroups")
        with self.cond:
            user = self.ensure_user(user_id, username, first_name)
            chat = self.ensure_chat(chat_id, chat_type, title, thread_id)
            message_id = self.next_message_id(chat_id)
            message: dict[str, Any] = {
                "message_id": message_id,
                "from": dict(user),
                "chat": self.chat_json(chat),
                "date": int(time.time()),
            }
            if thread_id is not None:
                message["message_thread_id"] = thread_id
                message["is_topic_message"] = True
            if reply_to is not None:
                original = self.messages.get((chat_id, reply_to))
                if original is None:
                    raise ValueError(f"no message {reply_to} in chat {chat_id} to reply to")
                message["reply_to_message"] = dict(original)
            if photo_data is not None and photo is None:
                photo = (640, 480)
            if document_data is not None and document is None:
                raise ValueError("document_data needs document=(name, mime, size)")
            media = photo is not None or document is not None or voice is not None
            if voice is not None:
                message["voice"] = {
                    "file_id": self.keep_file(f"voice-{message_id}", "voice/file.oga", voice),
                    "file_unique_id": f"uvoice{message_id}",
                    "duration": max(1, len(voice) // 4000),
                    "mime_type": "audio/ogg",
                    "file_size": len(voice),
                }
            if photo is not None:
                width, height = photo
                sizes = [*PHOTO_SIZES, (width, height)]
                message["photo"] = [
                    {
                        "file_id": f"photo-{message_id}-{index}",
                        "file_unique_id": f"uphoto{message_id}{index}",
                        "width": w,
                        "height": h,
                        "file_size": w * h // 10,
                    }
                    for index, (w, h) in enumerate(sizes)
                ]
                if photo_data is not None:
                    largest = message["photo"][-1]
                    largest["file_size"] = len(photo_data)
                    self.keep_file(largest["file_id"], "photos/file.jpg", photo_data)
            if document is not None:
                name, mime, size = document
                message["document"] = {
                    "file_id": f"doc-{message_id}",
                    "file_unique_id": f"udoc{message_id}",
                    "file_name": name,
                    "mime_type": mime,
                    "file_size": size,
                }
                if document_data is not None:
                    message["document"]["file_size"] = len(document_data)
                    self.keep_file(f"doc-{message_id}", f"documents/{name}", document_data)
            if text:
                message["caption" if media else "text"] = text
                entities = command_entities(text)
                if entities:
                    message["caption_entities" if media else "entities"] = entities
            self.messages[(chat_id, message_id)] = message
            self.push_update("message", message)
            return message_id

    def edited_user_message(self, chat_id: int, message_id: int, text: str) -> int:
        with self.cond:
            original = self.messages.get((chat_id, message_id))
            if original is None or original.get("from", {}).get("is_bot"):
                raise ValueError(f"no user message {message_id} in chat {chat_id}")
            edited = {**original, "text": text, "edit_date": int(time.time())}
            self.messages[(chat_id, message_id)] = edited
            return self.push_update("edited_message", edited)

    def callback_press(self, chat_id: int, user_id: int, message_id: int, data: str) -> str:
        with self.cond:
            sent = self.find_sent(chat_id, message_id)
            if sent is None or sent.deleted:
                raise ValueError(f"the bot has no message {message_id} in chat {chat_id}")
            offered = [b.callback_data for row in sent.buttons for b in row]
            if data not in offered:
                raise ValueError(
                    f"message {message_id} has no button with data {data!r} (it has {offered})"
                )
            user = self.ensure_user(user_id, None, None)
            callback_id = str(next(self._callback_ids))
            self.pending_callbacks[callback_id] = (chat_id, message_id)
            self.push_update(
                "callback_query",
                {
                    "id": callback_id,
                    "from": dict(user),
                    "message": dict(self.messages[(chat_id, message_id)]),
                    "chat_instance": f"ci{abs(chat_id)}",
                    "data": data,
                },
            )
            return callback_id

    # ---- waiting -------------------------------------------------------------------------------

    def wait_for(self, probe: Callable[[], T | None], timeout: float, what: str) -> T:
        """Block until `probe()` returns something other than None/False; TimeoutError else."""
        return wait_on(self.cond, probe, timeout, fake="fake Telegram", what=what)


def command_entities(text: str) -> list[dict[str, Any]]:
    """A leading `/command` (or `/command@bot`) is a bot_command entity, as Telegram marks it."""
    if not text.startswith("/"):
        return []
    token = text.split(maxsplit=1)[0] if text.strip() else text
    if len(token) < 2:
        return []
    return [{"type": "bot_command", "offset": 0, "length": len(token.encode("utf-16-le")) // 2}]
