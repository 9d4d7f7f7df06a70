"""The web chat and dashboard (L6, served by the gateway's `web` platform).

`herald.gateway.adapters.web` is the platform adapter; this package holds its
login and CSRF guard (`auth`), the per-chat live event streams (`events`), the
FastAPI app (`app`, `routes`) and the page itself (``static/``: plain HTML, CSS
and JavaScript, no build step and no third-party requests).
"""

from herald.gateway.web.auth import create_token, login_token_matcher, token_path
from herald.gateway.web.events import ChatEvents

__all__ = ["ChatEvents", "create_token", "login_token_matcher", "token_path"]
