"""A fake Discord for tests: REST API and websocket gateway on 127.0.0.1 that the real
discord.py client talks to (see `herald.gateway.platforms.discord.connection`).

It validates what the bot sends the way Discord does (2,000 characters, empty
messages), records messages, edits, typing, interaction responses and uploaded files,
keeps every dispatch for RESUME, and injects faults: heartbeat acks that stop, a socket
that goes silent, dropped connections (once or every few seconds), refused resumes,
op 7 reconnects, REST 5xx/429 answers and cut connections.
"""

from herald.testing.fake_discord.records import (
    MAX_MESSAGE_LENGTH,
    ApiCall,
    EditRecord,
    Fault,
    GatewayCounters,
    InteractionResponse,
    SentMessage,
    UploadedFile,
)
from herald.testing.fake_discord.server import DEFAULT_TOKEN, FakeDiscordServer

__all__ = [
    "DEFAULT_TOKEN",
    "MAX_MESSAGE_LENGTH",
    "ApiCall",
    "EditRecord",
    "FakeDiscordServer",
    "Fault",
    "GatewayCounters",
    "InteractionResponse",
    "SentMessage",
    "UploadedFile",
]
