"""`herald doctor`'s entrance lines: every way in that Herald serves, where it listens,
and whether the secret guarding it passes the one rule (`herald.config.check_entrance`).
Secrets are judged, never printed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from herald.config import EntranceSecret, HeraldConfig, HeraldHome, Secrets


@dataclass
class Check:
    """One doctor line (defined here, below `doctor`, which imports these checks)."""

    name: str
    status: str  # ok | warn | fail
    detail: str
    fix: str = ""


def _exposure(host: str, *, tls_assumed: bool = False) -> str:
    """A warning for a non-loopback bind: Herald serves plain HTTP, so a key crosses
    the network in clear unless a TLS proxy stands in front."""
    from herald.config import is_loopback

    if is_loopback(host) or tls_assumed:
        return ""
    return (
        f"; {host} is reachable from the network over plain HTTP: put a TLS reverse proxy "
        "in front (or bind 127.0.0.1 and tunnel)"
    )


def _secret_check(
    name: str,
    where: str,
    entrance: EntranceSecret,
    config: HeraldConfig,
    secrets: Secrets,
    hashed: dict,
    *,
    enabled: bool,
    host: str | None,
) -> Check:
    from herald.config import (
        MissingSecretError,
        check_entrance,
        entrance_env_name,
        entrance_label,
        fix_hint,
    )

    label = entrance_label(entrance, config)
    try:
        problem = check_entrance(entrance, config, secrets, matches_hashed=hashed)
    except MissingSecretError as exc:
        problem = str(exc)
    env_name = entrance_env_name(entrance, config)
    fix = fix_hint(entrance, env_name, exists=bool(secrets.get(env_name))) if problem else ""
    if not enabled and problem == "is not set":
        return Check(name, "ok", f"{where} (disabled, no secret set)")
    if not enabled:
        state = "disabled" if problem is None else f"disabled; {label} {problem}"
        return Check(name, "ok" if problem is None else "warn", f"{where} ({state})", fix)
    if problem is not None:
        return Check(name, "fail", f"{where}: refuses to start, {label} {problem}", fix)
    warning = _exposure(host) if host else ""
    return Check(name, "warn" if warning else "ok", f"{where}: {label} passes{warning}")


def check_entrances(home: HeraldHome, config: HeraldConfig) -> list[Check]:
    from herald.config import ENTRANCE_SECRETS, Secrets
    from herald.gateway.platforms.web import login_token_matcher

    secrets = Secrets(home.env_path)
    hashed = login_token_matcher(home.root)
    platforms = config.gateway.platforms
    api, webhook = platforms.api, platforms.webhook
    checks = [
        _secret_check(
            "entrance api",
            f"http://{api.host}:{api.port}/v1",
            ENTRANCE_SECRETS["api"],
            config,
            secrets,
            hashed,
            enabled=api.enabled,
            host=api.host,
        ),
        _secret_check(
            "entrance webhook",
            f"http://{webhook.host}:{webhook.port}",
            ENTRANCE_SECRETS["webhook"],
            config,
            secrets,
            hashed,
            enabled=webhook.enabled,
            host=webhook.host,
        ),
    ]
    checks.append(_web_check(home, config, bool(hashed)))
    token_env = config.mcp.serve.token_env
    if secrets.get(token_env):
        mcp = _secret_check(
            "entrance mcp http",
            "herald mcp serve --http HOST:PORT",
            ENTRANCE_SECRETS["mcp"],
            config,
            secrets,
            hashed,
            enabled=True,
            host=None,
        )
        checks.append(mcp)
    else:
        checks.append(
            Check(
                "entrance mcp http",
                "ok",
                f"not configured ({token_env} is not set, so `herald mcp serve --http` "
                "refuses to start; stdio needs no secret)",
            )
        )
    telegram = platforms.telegram
    state = "enabled" if telegram.enabled else "disabled"
    checks.append(
        Check(
            "entrance telegram",
            "ok",
            f"{state}; outbound only (Herald polls the Bot API), no port to guard; "
            "allowed_users and pairing decide who is heard",
        )
    )
    checks += _chat_checks(config)
    return checks


def _chat_checks(config: HeraldConfig) -> list[Check]:
    """Discord, Slack and WhatsApp: what each exposes (a port for Slack's HTTP events
    and WhatsApp's webhook)."""
    platforms = config.gateway.platforms
    discord, slack = platforms.discord, platforms.slack
    mention = "a mention" if discord.require_mention else "any message"
    checks = [
        Check(
            "entrance discord",
            "ok",
            f"{'enabled' if discord.enabled else 'disabled'}; outbound only (a gateway "
            f"websocket to Discord), no port to guard; guild channels need {mention}; "
            "allowed_users and pairing decide who is heard",
        )
    ]
    state = "enabled" if slack.enabled else "disabled"
    if slack.mode == "socket":
        detail = f"{state}; Socket Mode: outbound only, no port to guard"
        status = "ok"
    else:
        where = f"http://{slack.host}:{slack.port}{slack.path}"
        warning = _exposure(slack.host) if slack.enabled else ""
        detail = f"{state}; HTTP events at {where}, signed requests only{warning}"
        status = "warn" if warning else "ok"
    checks.append(
        Check("entrance slack", status, detail + "; allowed_users and pairing decide who is heard")
    )
    whatsapp = platforms.whatsapp
    where = f"http://{whatsapp.host}:{whatsapp.port}{whatsapp.path}"
    warning = _exposure(whatsapp.host) if whatsapp.enabled else ""
    checks.append(
        Check(
            "entrance whatsapp",
            "warn" if warning else "ok",
            f"{'enabled' if whatsapp.enabled else 'disabled'}; webhook at {where}, deliveries "
            f"signed with the app secret only{warning}; allowed_users and pairing decide who "
            "is heard",
        )
    )
    checks.append(_matrix_check(platforms.matrix))
    return checks


def _matrix_check(matrix: Any) -> Check:
    """Matrix: outbound only (a sync long poll); a homeserver over plain HTTP off this
    machine carries the access token and every unencrypted message in the clear."""
    state = "enabled" if matrix.enabled else "disabled"
    server = matrix.homeserver or "no homeserver set"
    detail = (
        f"{state}; outbound only (sync with {server}), no port to guard; end-to-end "
        f"encryption {'on' if matrix.encryption else 'off (encrypted rooms get no answer)'}; "
        "allowed_users decide who is heard"
    )
    from herald.config import is_loopback

    host = urlsplit(matrix.homeserver or "").hostname or ""
    plain = (matrix.homeserver or "").startswith("http://")
    if matrix.enabled and plain and not is_loopback(host):
        return Check(
            "entrance matrix",
            "warn",
            detail + f"; {server} is plain HTTP: use https:// (the token travels with every call)",
        )
    return Check("entrance matrix", "ok", detail)


def _web_check(home: HeraldHome, config: HeraldConfig, has_token: bool) -> Check:
    web = config.gateway.platforms.web
    where = f"http://{web.host}:{web.port}{web.base_path or '/'}"
    if not has_token:
        status = "fail" if web.enabled else "ok"
        state = "" if web.enabled else " (disabled)"
        return Check(
            "entrance web chat",
            status,
            f"{where}{state}: no login token yet",
            "herald web token" if web.enabled else "",
        )
    # `herald web token` makes 24 random bytes (192 bits) and keeps only a scrypt hash,
    # so the token passes the rule by construction; reuse is checked from the other side.
    tls = bool(web.secure_cookie)
    warning = _exposure(web.host, tls_assumed=tls) if web.enabled else ""
    state = "" if web.enabled else " (disabled)"
    return Check(
        "entrance web chat",
        "warn" if warning else "ok",
        f"{where}{state}: login token from `herald web token` passes (192 random bits, "
        f"only its hash is stored){warning}",
    )


__all__ = ["Check", "check_entrances"]
