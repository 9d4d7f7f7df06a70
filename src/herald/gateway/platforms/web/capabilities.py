"""Dashboard tabs for the autonomous half: scheduled jobs (with their runs, run now,
pause/resume), the kanban board (tasks by status, approve a task in review) and the
sub-agents running now.

A tab exists only when its capability does (`available_tabs`); each route reads the
gateway profile's own home. Job runs started here run on a worker thread and are
recorded like any other run, so the page simply reloads the list."""

from __future__ import annotations

import asyncio
import importlib.util
import logging
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import FastAPI, Path, Request

from herald.gateway.platforms.web.errors import WebError

SQLITE_MAX_INT = 2**63 - 1  # a larger id would overflow the query, not just miss

if TYPE_CHECKING:
    from herald.config import Settings
    from herald.gateway.platforms.web.backend import WebBackend

log = logging.getLogger(__name__)

_CAPABILITIES = {"jobs": "herald.cron", "board": "herald.kanban", "agents": "herald.delegation"}


def available_tabs() -> list[str]:
    tabs = ["chat", "dashboard"]
    tabs += [tab for tab, module in _CAPABILITIES.items() if importlib.util.find_spec(module)]
    return [*tabs, "memory"]


def _settings(adapter: WebBackend) -> Settings:
    from herald.config import HeraldHome, Secrets, Settings, load_config

    home = HeraldHome(adapter.home_root)
    return Settings(home=home, config=load_config(home.config_path), secrets=Secrets(home.env_path))


def add_capability_routes(app: FastAPI, adapter: WebBackend, api: str) -> None:
    if "jobs" in available_tabs():
        _add_job_routes(app, adapter, api)
    if "board" in available_tabs():
        _add_board_routes(app, adapter, api)
    if "agents" in available_tabs():
        _add_agent_routes(app, adapter, api)


def _add_agent_routes(app: FastAPI, adapter: WebBackend, api: str) -> None:
    @app.get(api + "/agents")
    async def list_agents() -> dict[str, Any]:
        """Sub-agents of this gateway process: running, queued and recently ended."""
        from herald.delegation import board

        return {
            "agents": [
                {
                    "id": c.id,
                    "parent_session_id": c.parent_session_id,
                    "session_id": c.session_id,
                    "goal": adapter.redact(c.goal),
                    "status": c.status,
                    "activity": adapter.redact(c.activity),
                    "tool_calls": c.tool_calls,
                    "cost_usd": c.cost_usd,
                    "elapsed": round(c.elapsed(), 1),
                }
                for c in board.all_children()
            ]
        }


def _add_job_routes(app: FastAPI, adapter: WebBackend, api: str) -> None:
    from herald.cron import CronStore, scheduler_status

    def store() -> CronStore:
        from herald.config import HeraldHome

        return CronStore.for_home(HeraldHome(adapter.home_root))

    @app.get(api + "/jobs")
    async def list_jobs() -> dict[str, Any]:
        with store() as jobs:
            status = scheduler_status(jobs)
            return {
                "scheduler": {"running": status.running, "message": status.message},
                "jobs": [
                    {
                        **job.to_dict(),
                        "prompt": adapter.redact(job.prompt),
                        "runs": [
                            {
                                "status": r.status,
                                "scheduled_for": r.scheduled_for,
                                "finished_at": r.finished_at,
                                "error": adapter.redact(r.error or r.reason or ""),
                                "session_id": r.session_id,
                            }
                            for r in jobs.runs(job.name, limit=5)
                        ],
                    }
                    for job in jobs.jobs()
                ],
            }

    @app.post(api + "/jobs/{name}/{action}")
    async def job_action(name: str, action: str) -> dict[str, Any]:
        from herald.cron import JobError, set_enabled
        from herald.cron.jobs import require_job
        from herald.cron.scheduler import Scheduler

        if action not in ("run", "pause", "resume"):
            raise WebError(404, "job actions are run, pause and resume")
        with store() as jobs:
            try:
                job = require_job(jobs, name)
            except JobError as exc:
                raise WebError(404, str(exc)) from None
            if action != "run":
                set_enabled(jobs, job.name, action == "resume")
                return {"ok": True, "enabled": action == "resume"}
        settings = _settings(adapter)

        def run_now() -> None:
            with store() as own:
                record = Scheduler(settings, own, kind="manual").run_now(job)
                log.info("web: job %s run now: %s", name, record.status if record else "busy")

        asyncio.get_running_loop().run_in_executor(None, run_now)
        return {"ok": True, "started": True}


def _add_board_routes(app: FastAPI, adapter: WebBackend, api: str) -> None:
    def board() -> Any:
        from herald.kanban import open_board

        settings = _settings(adapter)
        return open_board(settings.config, settings.home, settings.secrets)

    @app.get(api + "/board")
    async def list_tasks() -> dict[str, Any]:
        from herald.kanban import KanbanError

        try:
            tasks = board()
        except KanbanError as exc:
            raise WebError(503, str(exc)) from None
        try:
            return {
                "tasks": [
                    {
                        **t.to_dict(),
                        "body": adapter.redact(t.body),
                        "title": adapter.redact(t.title),
                    }
                    for t in tasks.list()
                ]
            }
        finally:
            tasks.close()

    @app.post(api + "/board/{task_id}/approve")
    async def approve(
        task_id: Annotated[int, Path(ge=1, le=SQLITE_MAX_INT)], request: Request
    ) -> dict[str, Any]:
        from herald.kanban import KanbanError

        tasks = board()
        try:
            return {"task": tasks.approve(task_id, author="owner (web)").to_dict()}
        except KanbanError as exc:
            raise WebError(400, str(exc)) from None
        finally:
            tasks.close()


__all__ = ["add_capability_routes", "available_tabs"]
