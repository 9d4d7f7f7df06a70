"""The Slack adapter's secrets: the bot token (`xoxb-`), and the app-level token
(`xapp-`, Socket Mode) or the signing secret (HTTP events), each inline or, as
recommended, a `${VAR}` reference resolved from `.env`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from herald.config import Secrets
    from herald.config.schema_slack import SlackPlatformConfig

SECTION = "gateway.platforms.slack"


class SlackConfigError(ValueError):
    """The Slack settings cannot work; the message names the setting to fix."""


@dataclass(frozen=True)
class SlackSecrets:
    bot_token: str
    app_token: str | None
    signing_secret: str | None


def _secret(value: str | None, secrets: Secrets, key: str, example: str, where: str) -> str:
    from herald.gateway.secret_refs import resolve_secret_ref

    setting = f"{SECTION}.{key}"
    found = resolve_secret_ref(value, secrets, setting=setting)
    if found is None:
        raise SlackConfigError(
            f"{setting} is not set: put `{key}: ${{{example}}}` under {SECTION} in "
            f"config.yaml and {example}=… in .env ({where})"
        )
    return found


def resolve_secrets(section: SlackPlatformConfig, secrets: Secrets) -> SlackSecrets:
    bot = _secret(
        section.bot_token,
        secrets,
        "bot_token",
        "SLACK_BOT_TOKEN",
        "api.slack.com/apps → your app → OAuth & Permissions → Bot User OAuth Token",
    )
    if not bot.startswith("xoxb-"):
        # Never echo the value: it may be a real secret pasted into the wrong place.
        raise SlackConfigError(f"{SECTION}.bot_token must be a bot token (it starts with xoxb-)")
    app_token = signing = None
    if section.mode == "socket":
        app_token = _secret(
            section.app_token,
            secrets,
            "app_token",
            "SLACK_APP_TOKEN",
            "Basic Information → App-Level Tokens, with the connections:write scope",
        )
        if not app_token.startswith("xapp-"):
            raise SlackConfigError(
                f"{SECTION}.app_token must be an app-level token (it starts with xapp-)"
            )
    else:
        signing = _secret(
            section.signing_secret,
            secrets,
            "signing_secret",
            "SLACK_SIGNING_SECRET",
            "Basic Information → App Credentials → Signing Secret",
        )
    return SlackSecrets(bot, app_token, signing)
