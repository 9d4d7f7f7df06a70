"""`herald sessions list|show|export`."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from herald.cli.common import fail, load, open_store, resolve_session_id, write_stdout

if TYPE_CHECKING:
    from herald.state import SessionRecord, StateStore, StoredMessage

app = typer.Typer(help="List, inspect and export stored sessions.", no_args_is_help=True)


def _when(ts: float | None) -> str:
    return datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M") if ts else "-"


def cache_hit_ratio(session: SessionRecord) -> float | None:
    if not session.prompt_tokens:
        return None
    return session.cache_read_tokens / session.prompt_tokens


def usage_lines(session: SessionRecord) -> list[str]:
    ratio = cache_hit_ratio(session)
    cost = session.estimated_cost_usd
    return [
        f"model calls: {session.api_calls}",
        f"prompt tokens: {session.prompt_tokens:,} (cache read {session.cache_read_tokens:,}, "
        f"cache write {session.cache_write_tokens:,})",
        f"cache hit ratio: {ratio:.0%}" if ratio is not None else "cache hit ratio: -",
        f"completion tokens: {session.completion_tokens:,}",
        f"estimated cost: ${cost:.4f}" if cost else "estimated cost: - (unknown or free model)",
    ]


def _resolve(store: StateStore, prefix: str) -> SessionRecord:
    session = store.get_session(resolve_session_id(store, prefix) or "")
    if session is None:
        fail(f"no session matches {prefix!r}")
    return session


@app.command("list")
def list_sessions(
    ctx: typer.Context,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="how many")] = 20,
    source: Annotated[str | None, typer.Option(help="only sessions from this surface")] = None,
    show_all: Annotated[
        bool, typer.Option("--all", help="include background-review sessions")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
) -> None:
    """The most recently active sessions (background reviews only with --all)."""
    from herald.cli.tables import Column, print_json, print_table

    settings = load(ctx)
    hidden = () if show_all or source is not None else HIDDEN_SOURCES
    with open_store(settings) as store:
        sessions = store.list_sessions(limit=limit, source=source, exclude_sources=hidden)
        total = store.count_sessions()
    if as_json:
        print_json([_session_json(s) for s in sessions])
        return
    if not sessions:
        typer.echo(_nothing_listed(total, source))
        return
    columns = [Column("id"), Column("updated"), Column("source"), Column("model"),
               Column("title", flex=True)]  # fmt: skip
    print_table(
        columns,
        [(s.id, _when(s.updated_at), s.source or "-", s.model or "-", s.title or "")
         for s in sessions],
    )  # fmt: skip


def _session_json(s: SessionRecord) -> dict[str, object]:
    return {
        "id": s.id,
        "title": s.title,
        "source": s.source,
        "profile": s.profile,
        "provider": s.provider,
        "model": s.model,
        "created_at": s.created_at,
        "updated_at": s.updated_at,
        "last_exit_reason": s.last_exit_reason,
    }


# Sessions the user did not start: shown by `sessions list --all` (or --source review).
HIDDEN_SOURCES = ("review",)


def _nothing_listed(total: int, source: str | None) -> str:
    if total == 0:
        return "no sessions yet — start one with: herald chat"
    sessions = f"{total} session{'s' if total != 1 else ''}"
    if source is not None:
        return f"no sessions from source {source!r} (there are {sessions} in all; drop --source)"
    return f"no sessions to show; {sessions} are background reviews (herald sessions list --all)"


def _message_line(m: StoredMessage) -> str:
    if m.tool_calls:
        calls = ", ".join((c.get("function") or {}).get("name", "?") for c in m.tool_calls)
        text = (m.content or "").strip()
        return f"{text}\n    → calls {calls}" if text else f"→ calls {calls}"
    return (m.content or "").strip()


@app.command("show")
def show(
    ctx: typer.Context,
    session_id: Annotated[str, typer.Argument(help="id, or its start or end (hex tail)")],
) -> None:
    """A session's details, usage and messages."""
    settings = load(ctx)
    with open_store(settings) as store:
        s = _resolve(store, session_id)
        messages = store.get_messages(s.id)
    lines = [
        f"session {s.id}",
        f"title: {s.title or '-'}",
        f"source: {s.source}   profile: {s.profile}",
        f"model: {s.provider or '-'}:{s.model or '-'}",
        f"created: {_when(s.created_at)}   updated: {_when(s.updated_at)}",
        f"last exit: {s.last_exit_reason or '-'}",
    ]
    if s.parent_id:
        lines.append(f"parent: {s.parent_id}")
    lines += usage_lines(s)
    lines.append("")
    for m in messages:
        label = m.role if m.role != "tool" else f"tool {m.tool_name or ''}".strip()
        lines.append(f"[{m.seq}] {label}: {_message_line(m)}")
    write_stdout("\n".join(lines) + "\n")


def export_markdown(session: SessionRecord, messages: list[StoredMessage]) -> str:
    out = [f"# {session.title or session.id}", "", f"- session: `{session.id}`"]
    out.append(f"- model: {session.provider}:{session.model}")
    out.append(f"- created: {_when(session.created_at)}")
    out.append("")
    for m in messages:
        heading = {"user": "User", "assistant": "Assistant", "system": "System"}.get(
            m.role, f"Tool result ({m.tool_name or m.tool_call_id})"
        )
        out.append(f"## {heading}")
        out.append("")
        if m.content:
            out.append(m.content.strip())
            out.append("")
        for call in m.tool_calls or []:
            fn = call.get("function") or {}
            out.append(f"Tool call `{fn.get('name')}`:")
            out.append("")
            out.append("```json")
            out.append(str(fn.get("arguments", "")))
            out.append("```")
            out.append("")
    return "\n".join(out)


def export_json(session: SessionRecord, messages: list[StoredMessage]) -> str:
    from dataclasses import asdict

    data: dict[str, Any] = {"session": asdict(session), "messages": [m.to_dict() for m in messages]}
    return json.dumps(data, ensure_ascii=False, indent=2, default=str)


@app.command("export")
def export(
    ctx: typer.Context,
    session_id: Annotated[str, typer.Argument(help="id, or its start or end (hex tail)")],
    fmt: Annotated[str, typer.Option("--format", "-f", help="json or md")] = "json",
    output: Annotated[Path | None, typer.Option("--output", "-o", help="file to write")] = None,
) -> None:
    """Export a session (JSON keeps every row, including archived ones; md the live ones)."""
    if fmt not in ("json", "md"):
        fail(f"unknown format {fmt!r}: use --format json or --format md")
    settings = load(ctx)
    with open_store(settings) as store:
        s = _resolve(store, session_id)
        if fmt == "json":
            text = export_json(s, list(store.get_messages(s.id, include_inactive=True)))
        else:
            text = export_markdown(s, list(store.get_messages(s.id)))
    if output is None:
        write_stdout(text if text.endswith("\n") else text + "\n")
    else:
        output.write_text(text, encoding="utf-8")
        typer.echo(f"wrote {output}", err=True)
