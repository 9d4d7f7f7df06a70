"""A fake Slack for tests: the Web API and Socket Mode on 127.0.0.1, for the real
slack_sdk and slack-bolt clients (`AsyncWebClient(base_url=server.api_url)`).

It answers like Slack (HTTP 200 with `ok: false` for errors, 429 with Retry-After),
runs the external file upload flow and `url_private` downloads, sends events as
Socket Mode envelopes (hello, acks, ping/pong, disconnect/refresh) or as signed HTTP
POSTs, retries unacknowledged events with the same event_id, and injects faults:
pongs that stop, a silent socket, dropped connections, Web API errors and 5xx/429.
"""

from herald.testing.fake_slack.delivery import sign
from herald.testing.fake_slack.records import (
    ApiCall,
    Envelope,
    Fault,
    PostedMessage,
    SocketCounters,
    UpdateRecord,
    UploadRecord,
)
from herald.testing.fake_slack.server import (
    DEFAULT_APP_TOKEN,
    DEFAULT_BOT_TOKEN,
    DEFAULT_SIGNING_SECRET,
    FakeSlackServer,
)

__all__ = [
    "DEFAULT_APP_TOKEN",
    "DEFAULT_BOT_TOKEN",
    "DEFAULT_SIGNING_SECRET",
    "ApiCall",
    "Envelope",
    "FakeSlackServer",
    "Fault",
    "PostedMessage",
    "SocketCounters",
    "UpdateRecord",
    "UploadRecord",
    "sign",
]
