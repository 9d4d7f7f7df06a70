"""`herald gateway run|status|stop`: the long-running process serving the chat platforms
(see herald.gateway.lifecycle)."""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Annotated

import typer

from herald.cli.common import fail, load, write_stdout

app = typer.Typer(help="Run Herald on its chat platforms and HTTP API.", no_args_is_help=True)


def _console_log() -> logging.Handler:
    """A foreground gateway shows its own progress on stderr (redacted)."""
    from herald.gateway.lifecycle import LOG_FORMAT, redacting_filter

    handler = logging.StreamHandler()
    handler.setLevel(logging.INFO)
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    handler.addFilter(redacting_filter())
    logging.getLogger("herald.gateway").addHandler(handler)
    return handler


# The libraries each platform needs; all come with the `gateway` extra.
PLATFORM_LIBRARIES = {
    "api": ("fastapi", "uvicorn"),
    "webhook": ("fastapi", "uvicorn"),
    "telegram": ("telegram",),
    "email": ("aioimaplib", "aiosmtplib"),
    "signal": ("httpx",),
    "discord": ("discord",),
    "slack": ("slack_bolt", "slack_sdk", "aiohttp"),
    "whatsapp": ("httpx", "fastapi", "uvicorn"),
    "matrix": ("mautrix", "olm", "aiosqlite"),
}
GATEWAY_EXTRA_HINT = "pip install 'herald[gateway]'"


def missing_libraries(platforms: object) -> list[str]:
    """The libraries the enabled platforms need that are not installed."""
    import importlib.util

    missing: list[str] = []
    for name, libraries in PLATFORM_LIBRARIES.items():
        if not getattr(getattr(platforms, name, None), "enabled", False):
            continue
        for library in libraries:
            try:
                found = importlib.util.find_spec(library) is not None
            except ValueError:
                found = False
            if not found and library not in missing:
                missing.append(library)
    return missing


@app.command("run")
def run(ctx: typer.Context) -> None:
    """Serve in the foreground until SIGTERM / Ctrl-C (then drain and exit)."""
    from herald.gateway.lifecycle import run_gateway

    settings = load(ctx)
    missing = missing_libraries(settings.config.gateway.platforms)
    if missing:
        verb = "is" if len(missing) == 1 else "are"
        fail(
            f"the gateway's platforms need {', '.join(missing)}, which {verb} not installed: "
            f"install the gateway extra with {GATEWAY_EXTRA_HINT}"
        )
    verbose = bool((ctx.find_root().obj or {}).get("verbose"))
    handler = None if verbose else _console_log()
    try:
        code = run_gateway(settings)
    except ModuleNotFoundError as exc:  # a library the check above does not know of
        fail(
            f"the gateway cannot start: {exc}; install the gateway extra with {GATEWAY_EXTRA_HINT}"
        )
    finally:
        if handler is not None:
            logging.getLogger("herald.gateway").removeHandler(handler)
    raise typer.Exit(code)


@app.command("status")
def status(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="the whole status as JSON")] = False,
) -> None:
    """Whether the gateway runs, and each platform's state: ok, degraded, reconnecting
    or down (with the reason), last receive and send, restarts in the last hour and
    replies not yet delivered. Exit code 1 when the gateway is not running, 3 when a
    platform is down."""
    import time
    from dataclasses import asdict

    from herald.cli.tables import Column, print_json, print_table
    from herald.gateway.lifecycle import gateway_status

    info = gateway_status(load(ctx).home)
    down = any(h.get("state") == "down" for h in info.health)
    if as_json:
        print_json(asdict(info))
        raise typer.Exit(1 if not info.running else 3 if down else 0)
    if not info.running:
        write_stdout(f"stopped{': ' + info.detail if info.detail else ''}\n")
        raise typer.Exit(1)
    now = time.time()
    since = (
        datetime.fromtimestamp(info.started_at).strftime("%Y-%m-%d %H:%M")
        if info.started_at
        else "-"
    )
    write_stdout(
        f"{info.state} (pid {info.pid}) since {since}; running turns: {info.running_turns}; "
        f"live agents: {info.live_agents}\n"
    )
    if not info.health:
        write_stdout(f"platforms: {', '.join(info.platforms) or 'none'}\n")
        return
    columns = [
        Column("platform"),
        Column("state"),
        Column("for"),
        Column("received"),
        Column("sent"),
        Column("restarts/1h"),
        Column("undelivered"),
        Column("reason", flex=True, fold=True),
    ]
    rows = [
        [
            h["platform"],
            h["state"],
            _ago(h.get("since"), now, suffix=""),
            _ago(h.get("last_receive"), now),
            _ago(h.get("last_send"), now),
            h.get("restarts_last_hour", 0),
            h.get("undelivered", 0),
            h.get("reason") or "",
        ]
        for h in info.health
    ]
    print_table(columns, rows)
    for h in info.health:  # a platform's own state: Matrix's device and its verification
        if h.get("details"):
            shown = "; ".join(f"{key}: {value}" for key, value in h["details"].items())
            write_stdout(f"\n{h['platform']}: {shown}\n")
    if info.transitions:
        write_stdout("\nrecent changes:\n")
        for t in info.transitions[-10:]:
            at = datetime.fromtimestamp(t["at"]).strftime("%H:%M:%S")
            reason = f" ({t['reason']})" if t.get("reason") else ""
            write_stdout(f"  {at} {t['platform']}: {t['from']} → {t['to']}{reason}\n")
    if info.undelivered:
        write_stdout("\nundelivered replies (oldest first; retried with backoff):\n")
        for r in info.undelivered:
            error = f" — {r['last_error']}" if r.get("last_error") else ""
            write_stdout(
                f"  {r['platform']}:{r['chat_id']} {_ago(r.get('created_at'), now)}, "
                f"{r.get('attempts', 0)} tries{error}: {r.get('preview', '')}\n"
            )
    if down:
        raise typer.Exit(3)


def _ago(moment: float | None, now: float, suffix: str = " ago") -> str:
    if not moment:
        return "never" if suffix else "-"
    seconds = max(0, int(now - moment))
    if seconds < 120:
        text = f"{seconds} s"
    elif seconds < 7200:
        text = f"{seconds // 60} min"
    else:
        text = f"{seconds // 3600} h"
    return text + suffix


@app.command("stop")
def stop(
    ctx: typer.Context,
    timeout: Annotated[float, typer.Option(help="seconds to wait for the drain")] = 0.0,
) -> None:
    """Ask the running gateway to drain and exit (SIGTERM), and wait for it."""
    from herald.gateway.lifecycle import stop_gateway

    settings = load(ctx)
    wait = timeout or settings.config.gateway.drain_seconds + 20
    stopped, message = stop_gateway(settings.home, timeout=wait)
    if not stopped:
        fail(message, code=1)
    write_stdout(message + "\n")
