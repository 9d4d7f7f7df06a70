"""Config section `gateway`: the long-running process and its platforms.

Secrets (bot tokens, API keys, webhook secrets) may be written inline or as a
`${VAR}` reference resolved through the secrets accessor (`.env`), which is the
recommended form.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, PositiveFloat, field_validator

from herald.config.schema_discord import DiscordPlatformConfig
from herald.config.schema_email import EmailPlatformConfig
from herald.config.schema_liveness import WatchdogConfig
from herald.config.schema_matrix import MatrixPlatformConfig
from herald.config.schema_signal import SignalPlatformConfig
from herald.config.schema_slack import SlackPlatformConfig
from herald.config.schema_whatsapp import WhatsAppPlatformConfig
from herald.config.strict import StrictModel

ApiScope = Literal["chat", "sessions:own", "sessions:all"]


class ApiKeyConfig(StrictModel):
    """One caller of the API: who it talks as and what it may do."""

    name: str = Field(min_length=1, max_length=64, description="shown in logs, never secret")
    key: str = Field(min_length=1, description="bearer token, e.g. ${HERALD_API_KEY_DANA}")
    identity: str = Field("owner", description="a name under `identities`")
    scopes: list[ApiScope] = Field(
        default_factory=lambda: ["chat", "sessions:own"],
        description="chat; sessions:own (its identity's API sessions); sessions:all",
    )


class ApiPlatformConfig(StrictModel):
    enabled: bool = False
    host: str = "127.0.0.1"
    port: int = Field(8642, ge=0, le=65535, description="0 = any free port")
    api_key: str | None = Field(
        None, description="the owner's bearer token (chat, sessions:own), e.g. ${HERALD_API_KEY}"
    )
    keys: list[ApiKeyConfig] = Field(
        default_factory=list, description="more callers, each with its identity and scopes"
    )
    model_name: str = Field("herald", description="the model id clients see in /v1/models")


class TelegramPlatformConfig(StrictModel):
    enabled: bool = False
    token: str | None = Field(None, description="bot token, e.g. ${TELEGRAM_BOT_TOKEN}")
    allowed_users: list[str] = Field(default_factory=list, description="user ids or @names")
    base_url: str | None = Field(None, description="Bot API base URL (tests, local servers)")
    shared_group_sessions: bool = Field(
        False, description="one session per group instead of one per member"
    )
    poll_timeout: float = Field(
        25.0, ge=1, le=50, description="seconds one long poll waits for updates"
    )
    download_attachments: bool = Field(
        True,
        description="fetch authorized senders' photos, voice notes and files into the "
        "gateway workdir's attachments/ (photos are shown to the model, voice notes "
        "transcribed)",
    )
    max_attachment_mb: float = Field(
        20.0, gt=0, le=20, description="larger files are noted, not fetched (the Bot API's cap)"
    )


class WebhookPlatformConfig(StrictModel):
    enabled: bool = False
    secret: str | None = Field(None, description="HMAC key, e.g. ${HERALD_WEBHOOK_SECRET}")
    profile: str | None = Field(None, description="profile that handles webhooks")
    host: str = "127.0.0.1"
    port: int = Field(8643, ge=0, le=65535)
    deliver_to: str | None = Field(
        None, description="where replies go, e.g. 'telegram:12345'; unset = in the response"
    )


class WebPlatformConfig(StrictModel):
    """The web chat and dashboard. Log in with the token `herald web token` prints."""

    enabled: bool = False
    host: str = Field("127.0.0.1", description="a non-loopback address needs a login token")
    port: int = Field(8644, ge=0, le=65535, description="0 = any free port")
    base_path: str = Field("", description="the sub-path behind a reverse proxy, e.g. /herald")
    secure_cookie: bool | None = Field(
        None, description="Secure cookie flag; unset = when the request came over HTTPS"
    )
    session_hours: float = Field(12.0, gt=0, description="how long a login lasts")
    login_attempts_per_minute: int = Field(5, ge=1, description="failed logins per address")
    max_upload_mb: float = Field(20.0, gt=0, description="largest file a chat may upload")


class PlatformsConfig(StrictModel):
    api: ApiPlatformConfig = Field(default_factory=ApiPlatformConfig)
    web: WebPlatformConfig = Field(default_factory=WebPlatformConfig)
    telegram: TelegramPlatformConfig = Field(default_factory=TelegramPlatformConfig)
    webhook: WebhookPlatformConfig = Field(default_factory=WebhookPlatformConfig)
    email: EmailPlatformConfig = Field(default_factory=EmailPlatformConfig)
    signal: SignalPlatformConfig = Field(default_factory=SignalPlatformConfig)
    discord: DiscordPlatformConfig = Field(default_factory=DiscordPlatformConfig)
    slack: SlackPlatformConfig = Field(default_factory=SlackPlatformConfig)
    whatsapp: WhatsAppPlatformConfig = Field(default_factory=WhatsAppPlatformConfig)
    matrix: MatrixPlatformConfig = Field(default_factory=MatrixPlatformConfig)


class ProfileRoute(StrictModel):
    platform: str
    guild: str | None = None
    chat: str | None = None
    thread: str | None = None
    profile: str


class HygieneConfig(StrictModel):
    """Compression before a turn, for sessions that grew too big between turns."""

    enabled: bool = True
    threshold: float = Field(
        0.85, gt=0, lt=1, description="compress first above this share of the context window"
    )
    max_messages: int = Field(400, ge=2, description="…or above this many stored messages")
    cooldown_seconds: list[float] = Field(
        default_factory=lambda: [300.0, 1800.0, 7200.0, 21600.0],
        description="after a failed compression, wait this long before the next try (a ladder)",
    )


class SendFileConfig(StrictModel):
    """Files a turn sends to its chat (the send_file tool)."""

    max_mb: float = Field(20.0, gt=0, description="largest file send_file uploads to a chat")
    platform_max_mb: dict[str, PositiveFloat] = Field(
        default_factory=dict,
        description="per-platform limits over max_mb, e.g. {discord: 10, email: 15}",
    )

    @field_validator("platform_max_mb")
    @classmethod
    def _known_platforms(cls, value: dict[str, float]) -> dict[str, float]:
        known = set(PlatformsConfig.model_fields)
        unknown = sorted(set(value) - known)
        if unknown:
            raise ValueError(
                f"no platform named {', '.join(unknown)}; use one of {', '.join(sorted(known))}"
            )
        return value

    def max_bytes(self, platform: str) -> int:
        return int(self.platform_max_mb.get(platform, self.max_mb) * 1_000_000)


class GatewayConfig(StrictModel):
    platforms: PlatformsConfig = Field(default_factory=PlatformsConfig)
    profile_routes: list[ProfileRoute] = Field(default_factory=list)
    busy_mode: Literal["interrupt", "steer", "queue"] = "interrupt"
    # ---- runner ---------------------------------------------------------------------------
    serve_profiles: list[str] = Field(
        default_factory=list,
        description="profiles served besides the gateway's own; empty = those profile_routes name",
    )
    allowed_users: dict[str, list[str]] = Field(
        default_factory=dict,
        description="extra allowlists by platform name (for platforms without allowed_users)",
    )
    toolsets: dict[str, str] = Field(
        default_factory=dict,
        description="toolset bundle by platform; default herald-<platform> if it exists, "
        "else herald-cli",
    )
    cwd: str | None = Field(
        None, description="working directory of gateway sessions; unset = where the gateway started"
    )
    max_concurrent_turns: int = Field(8, ge=1, description="turns running at once (thread pool)")
    max_agents: int = Field(64, ge=1, description="live agents kept in memory (LRU beyond)")
    agent_idle_seconds: float = Field(1800.0, gt=0, description="drop an idle agent after this")
    drain_seconds: float = Field(
        30.0, ge=0, description="on stop, wait this long for running turns before interrupting"
    )
    trusted_proxies: list[str] = Field(
        default_factory=list,
        description="reverse-proxy addresses whose X-Forwarded-For/-Proto the served "
        "entrances believe; empty = the peer address is the client, whatever headers say",
    )
    auto_resume: bool = Field(True, description="continue turns a restart interrupted")
    restart_window_seconds: float = Field(
        600.0, gt=0, description="restart-loop guard: the window boots are counted in"
    )
    restart_max_boots: int = Field(
        3, ge=1, description="resuming boots in the window after which auto-resume is skipped"
    )
    status_edit_interval: float = Field(
        2.0, ge=0, description="seconds between edits of the status line"
    )
    typing_interval: float = Field(4.0, gt=0, description="seconds between typing indicators")
    send_timeout_seconds: float = Field(20.0, gt=0, description="one platform send")
    send_retries: int = Field(2, ge=0, description="retries of a failed or timed-out send")
    clarify_timeout_seconds: float = Field(600.0, gt=0)
    pairing_code_ttl_seconds: float = Field(3600.0, gt=0)
    ignored_log_interval: float = Field(
        300.0, ge=0, description="log an ignored user at most this often"
    )
    hygiene: HygieneConfig = Field(default_factory=HygieneConfig)
    send_file: SendFileConfig = Field(default_factory=SendFileConfig)
    # ---- liveness (herald.gateway.watchdog) ----------------------------------------------
    watchdog: WatchdogConfig = Field(default_factory=WatchdogConfig)
    home_channel: str | None = Field(
        None,
        pattern=r"^[a-z][a-z0-9_-]*:.+$",
        description="platform:chat where the owner is told when another platform is down "
        "(e.g. telegram:12345); unset = no notices",
    )
    down_notice_after: float = Field(
        300.0, gt=0, description="seconds a platform must be down before the owner is told"
    )
