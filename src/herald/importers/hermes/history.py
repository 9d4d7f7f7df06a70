"""Sessions (state.db) and cron jobs (cron/jobs.json) of a hermes home → Herald's.

Sessions become Herald sessions with source ``import:hermes``: title and parent
(lineage) kept, the hermes id and start time in ``meta``, messages appended through
the store (so the full-text index has them: they are searchable at once). The hermes
id in ``meta`` is what makes a second run import nothing twice. Cron jobs become
*paused* Herald jobs made by ``unknown`` (confined like the model's until the owner
looks at them and resumes them); a schedule Herald cannot read is reported.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from herald.importers.hermes.items import SOURCE, Run
from herald.importers.hermes.reader import UnsafeSource

_ROLES = {"user", "assistant", "tool"}


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in conn.execute(f"PRAGMA table_info({table})").fetchall()}


def _tool_calls(raw: str | None) -> list[dict[str, Any]] | None:
    if not raw:
        return None
    calls = json.loads(raw)
    out = []
    for call in calls if isinstance(calls, list) else []:
        function = call.get("function") or {}
        arguments = function.get("arguments", "{}")
        out.append({
            "id": str(call.get("id") or call.get("call_id") or ""),
            "type": "function",
            "function": {"name": str(function.get("name") or call.get("name") or ""),
                         "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments)},
        })  # fmt: skip
    return out or None


def _messages(conn: sqlite3.Connection, sid: str, active_only: bool) -> list[dict[str, Any]]:
    where = " AND active = 1" if active_only else ""
    rows = conn.execute(
        "SELECT role, content, tool_calls, tool_call_id, tool_name FROM messages "
        f"WHERE session_id = ?{where} ORDER BY id",
        (sid,),
    ).fetchall()
    out = []
    for role, content, tool_calls, tool_call_id, tool_name in rows:
        if role not in _ROLES:
            continue
        message: dict[str, Any] = {"role": role, "content": content}
        calls = _tool_calls(tool_calls) if role == "assistant" else None
        if calls:
            message["tool_calls"] = calls
        if role == "tool":
            message["tool_call_id"] = tool_call_id
            message["tool_name"] = tool_name
        out.append(message)
    return out


def _imported(store) -> dict[str, str]:
    """hermes session id -> Herald session id, for sessions imported before."""
    found = {}
    for record in store.list_sessions(limit=1_000_000, source=SOURCE):
        hermes_id = record.meta.get("hermes_id")
        if isinstance(hermes_id, str):
            found[hermes_id] = record.id
    return found


def import_sessions(run: Run) -> None:
    from herald.state import StateStore

    try:
        with run.source.database_copy("state.db") as copy:
            conn = sqlite3.connect(f"file:{copy}?mode=ro", uri=True)
            try:
                rows = _read_sessions(conn)
            finally:
                conn.close()
    except FileNotFoundError:
        return
    except (OSError, UnsafeSource, sqlite3.Error, ValueError) as exc:
        run.add("sessions", "state.db", "skip", f"unreadable: {exc}")
        return
    if run.dry_run and not run.settings.home.state_db.exists():
        _place(run, None, rows, {})
        return
    with StateStore(run.settings.home.state_db) as store:
        _place(run, store, rows, _imported(store))


def _place(run: Run, store, rows: list[dict[str, Any]], done: dict[str, str]) -> None:
    from herald.state.messages import normalize_message

    pending = [r for r in rows if r["id"] not in done]
    for row in rows:
        if row["id"] in done:
            run.add("sessions", _label(row), "already")
    progress = True
    while pending and progress:  # parents before children, whatever the order
        progress = False
        for row in list(pending):
            parent = row["parent"]
            if parent and parent not in done and any(p["id"] == parent for p in pending):
                continue
            pending.remove(row)
            progress = True
            try:
                for message in row["messages"]:
                    normalize_message(message)
            except ValueError as exc:
                run.add("sessions", _label(row), "skip", f"a message Herald cannot keep: {exc}")
                continue
            if not run.dry_run:
                done[row["id"]] = _store_session(store, row, done.get(parent or ""))
            else:
                done[row["id"]] = "(dry run)"
            lineage = f", continues {parent}" if parent else ""
            run.add("sessions", _label(row), "import",
                    f"{len(row['messages'])} messages{lineage}")  # fmt: skip
    for row in pending:
        run.add("sessions", _label(row), "skip", "its parent session could not be placed")


def _label(row: dict[str, Any]) -> str:
    return f"{row['id']} {row['title']!r}" if row["title"] else row["id"]


def _read_sessions(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    cols = _columns(conn, "sessions")
    active_only = "active" in _columns(conn, "messages")
    pick = {name: name if name in cols else "NULL" for name in
            ("title", "model", "parent_session_id", "started_at", "source", "archived")}  # fmt: skip
    rows = conn.execute(
        f"SELECT id, {pick['title']}, {pick['model']}, {pick['parent_session_id']}, "
        f"{pick['started_at']}, {pick['source']} FROM sessions ORDER BY {pick['started_at']}, id"
    ).fetchall()
    return [
        {"id": str(sid), "title": title if isinstance(title, str) else None, "model": model,
         "parent": parent, "started_at": started, "hermes_source": source,
         "messages": _messages(conn, sid, active_only)}
        for sid, title, model, parent, started, source in rows
    ]  # fmt: skip


def _store_session(store, row: dict[str, Any], parent_id: str | None) -> str:
    sid = store.create_session(
        source=SOURCE,
        title=row["title"],
        model=row["model"] if isinstance(row["model"], str) else None,
        parent_id=parent_id if parent_id and parent_id != "(dry run)" else None,
    )
    started = row["started_at"]
    meta = {"hermes_id": row["id"], "hermes_source": row["hermes_source"]}
    if isinstance(started, int | float):
        meta["hermes_started_at"] = datetime.fromtimestamp(started, UTC).isoformat()
    store.update_session(sid, meta=meta)
    if row["messages"]:
        store.append_messages(sid, row["messages"])
    return sid


def _schedule(job: dict[str, Any]) -> str | None:
    schedule = job.get("schedule") or {}
    kind = schedule.get("kind")
    if kind == "cron" and isinstance(schedule.get("expr"), str):
        return schedule["expr"]
    if kind == "interval" and isinstance(schedule.get("minutes"), int):
        return f"every {schedule['minutes']}m"
    if kind == "once" and isinstance(schedule.get("run_at"), str):
        return schedule["run_at"]
    return None


def import_cron(run: Run) -> None:
    from herald.cron import CronStore, JobError, JobSpec, add_job
    from herald.cron.jobs import build_job

    try:
        data = json.loads(run.source.read_text("cron/jobs.json"))
    except FileNotFoundError:
        return
    except (OSError, UnsafeSource, ValueError) as exc:
        run.add("cron", "cron/jobs.json", "skip", f"unreadable: {exc}")
        return
    jobs = data.get("jobs") if isinstance(data, dict) else None
    with contextlib.ExitStack() as stack:
        if run.dry_run and not (run.settings.home.cron_dir / "cron.db").exists():
            scratch = Path(stack.enter_context(tempfile.TemporaryDirectory()))
            store = stack.enter_context(CronStore(scratch / "cron.db"))  # a dry run writes nothing
        else:
            store = stack.enter_context(CronStore.for_home(run.settings.home))
        for job in jobs if isinstance(jobs, list) else []:
            name = str(job.get("name") or job.get("id") or "")
            schedule, prompt = _schedule(job), job.get("prompt")
            if schedule is None or not isinstance(prompt, str):
                run.add("cron", name, "skip", f"schedule {job.get('schedule_display')!r} has no "
                        "Herald form")  # fmt: skip
                continue
            existing = store.job(name)
            if existing is not None:
                same = existing.prompt == prompt
                run.add("cron", name, "already" if same else "skip",
                        "" if same else "Herald has a job of that name (kept)")  # fmt: skip
                continue
            spec = JobSpec(schedule=schedule, prompt=prompt, deliver="log")
            if job.get("no_agent") or job.get("script"):
                run.add("cron", name, "skip", "a script job: scripts are not imported")
                continue
            try:
                make = build_job if run.dry_run else add_job
                make(run.settings, store, name, spec, enabled=False, created_by="unknown")
            except JobError as exc:
                run.add("cron", name, "skip", str(exc))
                continue
            run.add(
                "cron", name, "import", f"paused; {schedule}; resume with herald cron resume {name}"
            )


def report_rest(run: Run) -> None:
    for name, kind in run.source.listdir("profiles"):
        if kind == "dir":
            run.add("profiles", f"profile {name}", "skip",
                    f"a home of its own: herald -p {name} import hermes --from "
                    f"{run.source.root / 'profiles' / name}")  # fmt: skip


_FINISHED = {"done", "archived", "cancelled", "canceled", "failed"}


def import_kanban(run: Run) -> None:
    """Open hermes tasks become *blocked* Herald tasks (a worker would otherwise run text
    from an untrusted home unattended): the owner unblocks what they still want done."""
    from herald.kanban.model import KanbanError, NewTask
    from herald.kanban.open import open_board

    try:
        with run.source.database_copy("kanban.db") as copy:
            conn = sqlite3.connect(f"file:{copy}?mode=ro", uri=True)
            try:
                rows = conn.execute(
                    "SELECT id, title, COALESCE(body, ''), status, COALESCE(priority, 0) "
                    "FROM tasks ORDER BY created_at, id"
                ).fetchall()
            finally:
                conn.close()
    except FileNotFoundError:
        return
    except (OSError, UnsafeSource, sqlite3.Error) as exc:
        run.add("kanban", "kanban.db", "skip", f"unreadable: {exc}")
        return
    board = None
    if (
        not run.dry_run
        or run.settings.config.kanban.path
        or (run.settings.home.root / "kanban.db").exists()
    ):
        try:
            board = open_board(run.settings.config, run.settings.home, run.settings.secrets)
        except KanbanError as exc:
            run.add("kanban", "the board", "skip", str(exc))
            return
    try:
        have = {t.body.rsplit("(imported from hermes task ", 1)[-1].rstrip(")")
                for t in board.list()} if board else set()  # fmt: skip
        for task_id, title, body, status, priority in rows:
            label = f"{task_id} {title!r}"
            if str(task_id) in have:
                run.add("kanban", label, "already")
            elif str(status) in _FINISHED:
                run.add("kanban", label, "skip", f"{status} in hermes")
            else:
                if board is not None and not run.dry_run:
                    text = f"{body}\n\n(imported from hermes task {task_id})".lstrip()
                    task = board.add(NewTask(title=str(title), body=text, priority=int(priority)))
                    board.block(task.id, "imported from hermes: unblock it to let a worker take it",
                                author="owner")  # fmt: skip
                run.add("kanban", label, "import", "blocked until you unblock it")
    finally:
        if board is not None:
            board.close()
