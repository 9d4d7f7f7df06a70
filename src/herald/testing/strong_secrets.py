"""Entrance secrets for tests: fixed values that pass `herald.config.secret_problem`
and differ from each other (the rule refuses one secret on two entrances). Tests use
these instead of inventing literals, so a stricter rule changes one file.

They were made with `secrets.token_urlsafe(32)`; being public, they guard nothing.
"""

API_KEY = "mfJfvP6lv-26hfCb7upd0P9YZHpU0tI6pua9mph7CjQ"
WEBHOOK_SECRET = "5dBB5gC4irHiKwJNuX8Fx5RD2j0EPdb0yvaS2JgjlR0"
MCP_TOKEN = "HY4YTbY7BZg0gnN0QV1uBepbu_r1DTN2FFcMjOp5iME"
# A second strong value, for "another entrance" or "the wrong key" in a test.
OTHER_SECRET = "zklW2HXfhyNBg7JChDyTV_4SkNdNe6xbhRA9LwzOu0Y"

__all__ = ["API_KEY", "MCP_TOKEN", "OTHER_SECRET", "WEBHOOK_SECRET"]
