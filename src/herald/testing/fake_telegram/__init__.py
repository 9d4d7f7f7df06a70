"""A fake Telegram Bot API server for tests: a real HTTP server on 127.0.0.1 that the
real python-telegram-bot client talks to (point `ApplicationBuilder().base_url(...)` at
`server.base_url`). It queues user messages and button presses as updates for long
polling, validates what the bot sends the way Telegram does (UTF-16 length limit, HTML
entities, callback data size, unknown chats and threads), records every message, edit,
chat action and callback answer, and injects failures (blocked chats, 429 flood
control, dropped connections).
"""

from herald.testing.fake_telegram.formatting import MAX_MESSAGE_LENGTH, utf16_length
from herald.testing.fake_telegram.records import (
    ApiCall,
    CallbackAnswer,
    ChatActionRecord,
    EditRecord,
    InlineButton,
    SentMessage,
)
from herald.testing.fake_telegram.server import DEFAULT_TOKEN, FakeTelegramServer

__all__ = [
    "DEFAULT_TOKEN",
    "MAX_MESSAGE_LENGTH",
    "ApiCall",
    "CallbackAnswer",
    "ChatActionRecord",
    "EditRecord",
    "FakeTelegramServer",
    "InlineButton",
    "SentMessage",
    "utf16_length",
]
