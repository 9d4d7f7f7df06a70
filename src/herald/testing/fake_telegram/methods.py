"""The Bot API methods the fake server implements, with Telegram's validation and errors.

Parameters arrive as python-telegram-bot sends them (form fields, with non-string
values JSON-encoded) or as a JSON body; the coercers accept both.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any, Literal

from herald.testing.fake_telegram.formatting import (
    MAX_CALLBACK_DATA_BYTES,
    MAX_MESSAGE_LENGTH,
    PARSE_MODES,
    EntityParseError,
    utf16_length,
    visible_text,
)
from herald.testing.fake_telegram.records import (
    CHAT_FAILURES,
    ApiError,
    CallbackAnswer,
    ChatActionRecord,
    ChatInfo,
    DropConnection,
    EditRecord,
    SentMessage,
    Upload,
    bad_request,
)
from herald.testing.fake_telegram.state import FakeTelegramState

CHAT_ACTIONS = frozenset(
    {
        "typing",
        "upload_photo",
        "record_video",
        "upload_video",
        "record_voice",
        "upload_voice",
        "upload_document",
        "choose_sticker",
        "find_location",
        "record_video_note",
        "upload_video_note",
    }
)
CONFLICT = "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"
NOT_MODIFIED = (
    "message is not modified: specified new message content and reply markup are exactly "
    "the same as a current content and reply markup of the message"
)
MAX_POLL_TIMEOUT = 50.0


# ---- parameter coercion --------------------------------------------------------------------


def _decoded(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _int(params: dict[str, Any], name: str, *, required: bool = False) -> int | None:
    value = params.get(name)
    if value is None or value == "":
        if required:
            raise bad_request(f"{name} is empty" if name != "chat_id" else "chat_id is empty")
        return None
    try:
        return int(_decoded(value))
    except (TypeError, ValueError):
        if name == "chat_id":
            raise bad_request("chat not found") from None
        raise bad_request(f"invalid {name} specified") from None


def _bool(params: dict[str, Any], name: str) -> bool:
    return _decoded(params.get(name)) is True


def _json(params: dict[str, Any], name: str) -> Any:
    value = params.get(name)
    if value is None:
        return None
    decoded = _decoded(value)
    if isinstance(value, str) and decoded is value:
        raise bad_request(f"can't parse {name} JSON object")
    return decoded


def _kind(update: dict[str, Any]) -> str:
    return next(key for key in update if key != "update_id")


class BotApi:
    def __init__(self, state: FakeTelegramState) -> None:
        self.state = state
        self._methods: dict[str, Callable[[dict[str, Any]], Any]] = {
            "getme": self.get_me,
            "getupdates": self.get_updates,
            "deletewebhook": self.delete_webhook,
            "setmycommands": self.set_my_commands,
            "getmycommands": self.get_my_commands,
            "sendmessage": self.send_message,
            "senddocument": self.send_document,
            "sendvoice": self.send_voice,
            "getfile": self.get_file,
            "editmessagetext": self.edit_message_text,
            "sendchataction": self.send_chat_action,
            "answercallbackquery": self.answer_callback_query,
            "deletemessage": self.delete_message,
        }

    def knows(self, method: str) -> bool:
        return method.lower() in self._methods

    def call(self, method: str, params: dict[str, Any]) -> Any:
        return self._methods[method.lower()](params)

    # ---- shared checks (lock held) ----------------------------------------------------------

    def _writable_chat(self, params: dict[str, Any]) -> ChatInfo:
        chat_id = _int(params, "chat_id", required=True)
        assert chat_id is not None
        chat = self.state.chats.get(chat_id)
        if chat is None:
            raise bad_request("chat not found")
        if chat.failure is not None:
            code, description = CHAT_FAILURES[chat.failure]
            raise ApiError(code, description)
        if chat.migrated_to is not None:
            raise ApiError(
                400,
                "Bad Request: group chat was upgraded to a supergroup chat",
                migrate_to_chat_id=chat.migrated_to,
            )
        return chat

    @staticmethod
    def _visible(text: Any, parse_mode: Any) -> str:
        if not isinstance(text, str) or not text.strip():
            raise bad_request("message text is empty")
        if parse_mode not in (None, "") and parse_mode not in PARSE_MODES:
            raise bad_request("unsupported parse_mode")
        try:
            shown = visible_text(text, parse_mode or None)
        except EntityParseError as error:
            raise bad_request(f"can't parse entities: {error}") from None
        if not shown.strip():
            raise bad_request("message text is empty")
        if utf16_length(shown) > MAX_MESSAGE_LENGTH:
            raise bad_request("message is too long")
        return shown

    @staticmethod
    def _markup(params: dict[str, Any]) -> dict[str, Any] | None:
        markup = _json(params, "reply_markup")
        if markup is None:
            return None
        if not isinstance(markup, dict):
            raise bad_request("can't parse reply keyboard markup JSON object")
        rows = markup.get("inline_keyboard")
        if rows is None:
            return markup  # other keyboards are stored as given
        if not isinstance(rows, list) or not all(isinstance(row, list) for row in rows):
            raise bad_request(
                'field "inline_keyboard" of the InlineKeyboardMarkup should be an Array of Arrays'
            )
        for row in rows:
            for button in row:
                if not isinstance(button, dict) or not button.get("text"):
                    raise bad_request("text buttons are unallowed in the inline keyboard")
                data = button.get("callback_data")
                if data is not None and not (
                    0 < len(str(data).encode("utf-8")) <= MAX_CALLBACK_DATA_BYTES
                ):
                    raise bad_request("BUTTON_DATA_INVALID")
        return markup

    # ---- methods ----------------------------------------------------------------------------

    def get_me(self, params: dict[str, Any]) -> Any:
        return dict(self.state.bot)

    def delete_webhook(self, params: dict[str, Any]) -> Any:
        with self.state.cond:
            if _bool(params, "drop_pending_updates"):
                self.state.updates.clear()
                self.state.notify()
        return True

    def set_my_commands(self, params: dict[str, Any]) -> Any:
        commands = _json(params, "commands")
        if not isinstance(commands, list):
            raise bad_request("can't parse commands JSON object")
        for command in commands:
            name = command.get("command", "") if isinstance(command, dict) else ""
            if (
                not name
                or len(name) > 32
                or not name.replace("_", "").isalnum()
                or name != name.lower()
            ):
                raise bad_request("BOT_COMMAND_INVALID")
            if not 0 < len(command.get("description", "")) <= 256:
                raise bad_request("BOT_COMMAND_DESCRIPTION_INVALID")
        with self.state.cond:
            self.state.commands = commands
            self.state.notify()
        return True

    def get_my_commands(self, params: dict[str, Any]) -> Any:
        with self.state.cond:
            return list(self.state.commands)

    def get_updates(self, params: dict[str, Any]) -> Any:
        offset = _int(params, "offset")
        limit = max(1, min(100, _int(params, "limit") or 100))
        timeout = min(MAX_POLL_TIMEOUT, max(0.0, float(_decoded(params.get("timeout")) or 0)))
        state = self.state
        deadline = time.monotonic() + timeout
        with state.cond:
            if state.silent_polls:
                # A half-dead link: the request is taken and never answered. When the
                # silence ends (or the server stops) the connection is cut, unanswered.
                epoch = state.silence_epoch
                while state.silence_epoch == epoch and not state.stopping:
                    state.cond.wait(1.0)
                raise DropConnection()
            state.poll_generation += 1
            generation = state.poll_generation
            state.notify()  # an older long poll still waiting is terminated (409)
            allowed = _json(params, "allowed_updates")
            if isinstance(allowed, list):
                state.allowed_updates = {str(kind) for kind in allowed} or None
            if offset is not None:
                state.updates = [u for u in state.updates if u["update_id"] >= offset]
                state.notify()
            while True:
                if state.stopping:
                    return []
                if state.poll_generation != generation:
                    raise ApiError(409, CONFLICT)
                if state.allowed_updates is not None:
                    # Types the bot did not ask for are never delivered (Telegram drops them).
                    state.updates = [u for u in state.updates if _kind(u) in state.allowed_updates]
                if state.replays:  # delivered again, whatever offset was confirmed
                    replays, state.replays = state.replays, []
                    state.polls_served += 1
                    state.notify()
                    return [dict(u) for u in replays]
                if state.updates:
                    state.polls_served += 1
                    state.notify()
                    return [dict(u) for u in state.updates[:limit]]
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    state.polls_served += 1
                    state.notify()
                    return []
                state.cond.wait(remaining)

    def get_file(self, params: dict[str, Any]) -> Any:
        """getFile: where a file a user sent can be downloaded (under /file/bot<token>/)."""
        file_id = str(params.get("file_id") or "")
        with self.state.cond:
            known = self.state.files.get(file_id)
        if known is None:
            raise bad_request("wrong file_id or the file is temporarily unavailable")
        path, data = known
        return {
            "file_id": file_id,
            "file_unique_id": f"u{file_id}",
            "file_size": len(data),
            "file_path": path,
        }

    def send_voice(self, params: dict[str, Any]) -> Any:
        """sendVoice with the audio uploaded in the request (multipart), recorded like a
        sent message whose `voice` is the upload."""
        return self._send_upload(params, "voice")

    def send_document(self, params: dict[str, Any]) -> Any:
        """sendDocument with the file uploaded in the request (multipart), as a bot sends
        a file from its own disk; a file_id or URL is refused (nothing here to fetch)."""
        return self._send_upload(params, "document")

    def _send_upload(self, params: dict[str, Any], kind: Literal["voice", "document"]) -> Any:
        upload = params.get(kind)
        if not isinstance(upload, Upload):
            raise bad_request(f"there is no {kind} in the request")
        state = self.state
        with state.cond:
            chat = self._writable_chat(params)
            caption = str(params.get("caption") or "")
            if len(caption) > 1024:
                raise bad_request("message caption is too long")
            thread_id = _int(params, "message_thread_id")
            if thread_id is not None and thread_id not in chat.threads:
                raise bad_request("message thread not found")
            message_id = state.next_message_id(chat.chat_id)
            described: dict[str, Any] = {
                "file_id": f"{'voice' if kind == 'voice' else 'doc'}-{chat.chat_id}-{message_id}",
                "file_unique_id": f"u{message_id}",
                "file_size": len(upload.data),
            }
            if kind == "voice":
                described["duration"] = 1
            else:
                described["file_name"] = upload.filename
            message: dict[str, Any] = {
                "message_id": message_id,
                "from": dict(state.bot),
                "chat": state.chat_json(chat),
                "date": int(time.time()),
                kind: described,
            }
            if caption:
                message["caption"] = caption
            if thread_id is not None:
                message["message_thread_id"] = thread_id
                message["is_topic_message"] = True
            state.messages[(chat.chat_id, message_id)] = message
            state.sent.append(
                SentMessage(
                    chat_id=chat.chat_id,
                    message_id=message_id,
                    text=caption,
                    raw_text=caption,
                    parse_mode=None,
                    reply_to_message_id=None,
                    message_thread_id=thread_id,
                    reply_markup=None,
                    date=message["date"],
                    **{kind: upload},
                )
            )
            state.notify()
            return message

    def send_message(self, params: dict[str, Any]) -> Any:
        state = self.state
        with state.cond:
            chat = self._writable_chat(params)
            parse_mode = params.get("parse_mode") or None
            shown = self._visible(params.get("text"), parse_mode)
            markup = self._markup(params)
            thread_id = _int(params, "message_thread_id")
            if thread_id is not None and thread_id not in chat.threads:
                raise bad_request("message thread not found")
            reply_to, allow_without = (
                _int(params, "reply_to_message_id"),
                _bool(params, "allow_sending_without_reply"),
            )
            reply_parameters = _json(params, "reply_parameters")
            if isinstance(reply_parameters, dict):
                reply_to = int(reply_parameters.get("message_id", 0)) or None
                allow_without = reply_parameters.get("allow_sending_without_reply") is True
            original = state.messages.get((chat.chat_id, reply_to)) if reply_to else None
            if reply_to is not None and original is None:
                if not allow_without:
                    raise bad_request("message to be replied not found")
                reply_to = None
            message_id = state.next_message_id(chat.chat_id)
            message: dict[str, Any] = {
                "message_id": message_id,
                "from": dict(state.bot),
                "chat": state.chat_json(chat),
                "date": int(time.time()),
                "text": shown,
            }
            if thread_id is not None:
                message["message_thread_id"] = thread_id
                message["is_topic_message"] = True
            if original is not None:
                message["reply_to_message"] = dict(original)
            if markup is not None:
                message["reply_markup"] = markup
            state.messages[(chat.chat_id, message_id)] = message
            state.sent.append(
                SentMessage(
                    chat_id=chat.chat_id,
                    message_id=message_id,
                    text=shown,
                    raw_text=str(params.get("text")),
                    parse_mode=parse_mode,
                    reply_to_message_id=reply_to,
                    message_thread_id=thread_id,
                    reply_markup=markup,
                    date=message["date"],
                )
            )
            state.notify()
            return message

    def edit_message_text(self, params: dict[str, Any]) -> Any:
        state = self.state
        with state.cond:
            if params.get("inline_message_id"):
                raise bad_request("inline messages are not supported by this fake server")
            chat = self._writable_chat(params)
            message_id = _int(params, "message_id", required=True)
            assert message_id is not None
            stored = state.messages.get((chat.chat_id, message_id))
            sent = state.find_sent(chat.chat_id, message_id)
            if stored is None or (sent is not None and sent.deleted):
                raise bad_request("message to edit not found")
            if sent is None:
                raise bad_request("message can't be edited")
            parse_mode = params.get("parse_mode") or None
            shown = self._visible(params.get("text"), parse_mode)
            markup = self._markup(params)
            if shown == sent.text and markup == sent.reply_markup:
                raise bad_request(NOT_MODIFIED)
            sent.text, sent.raw_text, sent.parse_mode = shown, str(params["text"]), parse_mode
            sent.reply_markup = markup
            stored = {**stored, "text": shown, "edit_date": int(time.time())}
            stored.pop("reply_markup", None)
            if markup is not None:
                stored["reply_markup"] = markup
            state.messages[(chat.chat_id, message_id)] = stored
            state.edits.append(
                EditRecord(chat.chat_id, message_id, shown, sent.raw_text, parse_mode, markup)
            )
            state.notify()
            return stored

    def send_chat_action(self, params: dict[str, Any]) -> Any:
        state = self.state
        with state.cond:
            chat = self._writable_chat(params)
            action = params.get("action")
            if action not in CHAT_ACTIONS:
                raise bad_request("wrong parameter action in request")
            thread_id = _int(params, "message_thread_id")
            if thread_id is not None and thread_id not in chat.threads:
                raise bad_request("message thread not found")
            state.chat_actions.append(ChatActionRecord(chat.chat_id, str(action), thread_id))
            state.notify()
        return True

    def answer_callback_query(self, params: dict[str, Any]) -> Any:
        state = self.state
        query_id = str(params.get("callback_query_id") or "")
        with state.cond:
            if state.pending_callbacks.pop(query_id, None) is None:
                raise bad_request(
                    "query is too old and response timeout expired or query ID is invalid"
                )
            text = params.get("text")
            state.callback_answers.append(
                CallbackAnswer(query_id, str(text) if text else None, _bool(params, "show_alert"))
            )
            state.notify()
        return True

    def delete_message(self, params: dict[str, Any]) -> Any:
        state = self.state
        with state.cond:
            chat = self._writable_chat(params)
            message_id = _int(params, "message_id", required=True)
            assert message_id is not None
            sent = state.find_sent(chat.chat_id, message_id)
            if (chat.chat_id, message_id) not in state.messages or (sent and sent.deleted):
                raise bad_request("message to delete not found")
            if sent is None and chat.type == "private":
                raise bad_request("message can't be deleted")
            if sent is not None:
                sent.deleted = True
            del state.messages[(chat.chat_id, message_id)]
            state.notify()
        return True
