"""`herald usage`: spend and tokens by day, model, source, session or kind, with the
provider's cache reads and writes, and how the configured budget caps stand."""

from __future__ import annotations

import json
import time
from typing import Annotated, Any

import typer

from herald.cli.common import fail, load, open_store

GROUPINGS = ("day", "model", "source", "session", "kind")


def usage(
    ctx: typer.Context,
    days: Annotated[int, typer.Option("--days", min=1, help="how many days back")] = 30,
    by: Annotated[str, typer.Option("--by", help="day | model | source | session | kind")] = "day",
    as_json: Annotated[bool, typer.Option("--json", help="machine-readable output")] = False,
) -> None:
    """Spend and tokens over the last --days, grouped --by day, model, source or session."""
    from herald.state.reports import usage_by, usage_total

    if by not in GROUPINGS:
        fail(f"unknown grouping {by!r}; use --by one of: {', '.join(GROUPINGS)}")
    settings = load(ctx)
    since = time.time() - days * 86400
    with open_store(settings) as store:
        rows = store.report(usage_by, by, since=since)  # type: ignore[arg-type]
        total = store.report(usage_total, since=since)
        caps = cap_status(store, settings.config)
    if as_json:
        data: dict[str, Any] = {
            "days": days,
            "by": by,
            "rows": [r.to_dict() for r in rows],
            "total": total.to_dict(),
            "caps": caps,
        }
        typer.echo(json.dumps(data, indent=2))
        return
    if not rows:
        typer.echo(f"no model calls in the last {days} days")
    else:
        typer.echo(render(by, [*rows, total]))
    for cap in caps:
        typer.echo(
            f"{cap['key']}: {_fmt(cap['spent'], cap['unit'])} of "
            f"{_fmt(cap['limit'], cap['unit'])} {cap['scope']} ({cap['used']:.0%})"
        )


def _fmt(value: float, unit: str) -> str:
    return f"${value:.4f}" if unit == "usd" else f"{int(value):,} tokens"


def render(by: str, rows: list[Any]) -> str:
    header = (by, "calls", "prompt", "cache read", "cache write", "hit", "completion", "cost")
    table = [header] + [
        (
            r.key,
            f"{r.calls:,}",
            f"{r.prompt_tokens:,}",
            f"{r.cache_read_tokens:,}",
            f"{r.cache_write_tokens:,}",
            f"{r.cache_hit_rate:.0%}",
            f"{r.completion_tokens:,}",
            f"${r.cost_usd:.4f}",
        )
        for r in rows
    ]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    lines = []
    for n, row in enumerate(table):
        cells = [row[0].ljust(widths[0])] + [
            c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)
        ]
        lines.append("  ".join(cells).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def cap_status(store: Any, config: Any) -> list[dict[str, Any]]:
    """The day and month caps, global and per source (session and turn caps are shown
    by `/usage` inside a session)."""
    from herald.engine.spend import active_caps

    now = time.time()
    caps = [c for c in active_caps(config.budget, session_id="", source="", turn_started=now,
                                   now=now) if c.session_id is None]  # fmt: skip
    for source in config.budget.per_source:
        caps += [c for c in active_caps(config.budget, session_id="", source=source,
                                        turn_started=now, now=now) if c.source]  # fmt: skip
    out = []
    for cap in caps:
        spent = store.spent_since(cap.since, source=cap.source)
        value = spent.cost_usd if cap.unit == "usd" else float(spent.tokens)
        used = value / cap.limit if cap.limit else 1.0
        out.append({"key": cap.key, "unit": cap.unit, "scope": cap.scope, "limit": cap.limit,
                    "spent": value, "used": used})  # fmt: skip
    return out
