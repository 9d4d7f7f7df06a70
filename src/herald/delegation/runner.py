"""Running the children of one `delegate_task` call.

Each child is a real `Agent` in this process (built through the parent turn's
`ToolContext.spawn_agent`), in a session of its own (source ``delegate``, lineage
to the parent), with its own iteration budget and wall-clock limit. At most
``delegation.max_concurrent`` run at once; the rest wait in call order. The
call returns one `ChildReport` per task, in call order, once every child ended.

Control: the parent turn's cancel event (Ctrl-C, /stop, the handle) interrupts
every running child and keeps queued ones from starting; a child past its
timeout is interrupted and its partial work summarised; `/agents stop` stops one
child. Every child's turn ends through the engine's own interrupt path, so each
of its pending tool calls gets a result and both transcripts stay legal.

Approvals: a child's dangerous command is asked of the parent turn's human, with
the child named, one question at a time; a parent with no human gives its
children none, and the unattended policy of source ``delegate`` is always deny.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from herald.delegation.board import QUEUED, RUNNING, ChildRecord, board
from herald.delegation.fork import fork_seed
from herald.delegation.policy import (
    DELEGATE_SOURCE,
    ChildRules,
    ChildToolGate,
)
from herald.delegation.report import (
    ChildReport,
    clip_final,
    files_written,
    summarise_partial,
    transcript_steps,
)
from herald.engine.callbacks import TurnCallbacks
from herald.engine.handle import Humans
from herald.engine.options import AgentOptions

if TYPE_CHECKING:
    from herald.config import HeraldConfig
    from herald.config.schema_delegation import DelegationConfig
    from herald.engine.ports import AgentSpawner, ChildAgent
    from herald.safety import ApprovalPrompt
    from herald.tools import RequestSnapshot, ToolContext, ToolRegistry

log = logging.getLogger(__name__)

POLL_SECONDS = 0.05
STATUS_EVERY_SECONDS = 0.25  # how often the status lines are checked for changes
STOP_GRACE_SECONDS = 30.0  # after an interrupt, how long a child may take to wind down
CHILD_TOOLSET = "delegate-child"

CHILD_SYSTEM = (
    "You are a sub-agent: another Herald agent handed you one task. Work on it with your "
    "tools; nobody can answer questions, so decide and state your assumptions. Finish with "
    "a concise report for that agent: what you did and found, files you changed, and "
    "anything left unfinished."
)


@dataclass(frozen=True)
class TaskSpec:
    goal: str
    context: str = ""
    toolsets: tuple[str, ...] | None = None
    model: str | None = None

    def message(self) -> str:
        if not self.context.strip():
            return self.goal.strip()
        return f"{self.goal.strip()}\n\nContext from the agent that delegated this:\n{self.context.strip()}"


def child_config(config: HeraldConfig, task: TaskSpec) -> HeraldConfig:
    """The parent's config as a child runs with it: no learning review, no curator, no
    external memory provider, unattended approvals for source ``delegate`` denied, the
    task's model and toolsets."""
    from herald.config.schema_tools import CustomToolset

    approvals = config.approvals.model_copy(
        update={"unattended": {**config.approvals.unattended, DELEGATE_SOURCE: "deny"}}
    )
    update: dict[str, Any] = {
        "learning": config.learning.model_copy(update={"enabled": False}),
        "curator": config.curator.model_copy(update={"enabled": False}),
        "memory": config.memory.model_copy(update={"provider": None}),
        "approvals": approvals,
    }
    if task.model:
        update["model"] = config.model.model_copy(update={"name": task.model})
    if task.toolsets:
        custom = dict(config.toolsets.custom)
        custom[CHILD_TOOLSET] = CustomToolset(includes=list(task.toolsets))
        update["toolsets"] = config.toolsets.model_copy(update={"custom": custom})
    return config.model_copy(update=update)


class ApprovalRelay:
    """The parent turn's approval callable, shared by its children one question at a time,
    each prompt naming the child that asks."""

    def __init__(self, approve: Callable[[ApprovalPrompt], str | None], timeout: float):
        self.approve = approve
        self.timeout = timeout
        self.lock = threading.Lock()

    def for_child(self, record: ChildRecord) -> Callable[[ApprovalPrompt], str | None]:
        def ask(prompt: ApprovalPrompt) -> str | None:
            named = dataclasses.replace(prompt, requester=record.label)
            # Waiting for another child's question counts against this one's timeout.
            if not self.lock.acquire(timeout=self.timeout):
                return None
            try:
                if record.status != RUNNING or record.stop_requested:
                    return None
                return self.approve(named)
            finally:
                self.lock.release()

        return ask


class Delegation:
    """One `delegate_task` call: its tasks, their records and the children's reports."""

    def __init__(
        self,
        ctx: ToolContext,
        tasks: list[TaskSpec],
        *,
        mode: str,
        settings: DelegationConfig,
        depth: int,
    ):
        assert ctx.session_id is not None and ctx.spawn_agent is not None
        self.ctx = ctx
        self.tasks = tasks
        self.mode = mode
        self.settings = settings
        self.depth = depth  # the parent's depth; children are one deeper
        self.parent_session_id = ctx.session_id
        self.records = board.open_call(self.parent_session_id, [t.goal for t in tasks])
        self.reports: list[ChildReport | None] = [None] * len(tasks)
        self.snapshot: RequestSnapshot | None = (
            ctx.parent_request() if ctx.parent_request is not None else None
        )
        self.relay = (
            ApprovalRelay(
                ctx.approve, ctx.config.approvals.timeout_seconds if ctx.config else 120.0
            )
            if ctx.approve is not None
            else None
        )
        self.agents: dict[int, Any] = {}
        self._shown: dict[str, tuple[str, str, int]] = {}
        self._seed = fork_seed(self.snapshot) if mode == "fork" and self.snapshot else None

    # ---- the call ---------------------------------------------------------------------------

    def run(self) -> list[ChildReport]:
        workers = min(self.settings.max_concurrent, len(self.tasks))
        last_status = 0.0
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="herald-delegate") as pool:
            futures = [pool.submit(self._run_child, i) for i in range(len(self.tasks))]
            while not all(f.done() for f in futures):
                if self.ctx.cancel.is_set():
                    for record in self.records:
                        record.stop()
                now = time.monotonic()
                if now - last_status >= STATUS_EVERY_SECONDS:
                    last_status = now
                    self._show_status()
                time.sleep(POLL_SECONDS)
            for i, future in enumerate(futures):
                try:
                    future.result()
                except Exception as exc:  # a bug in a worker: that child still gets a report
                    log.exception("sub-agent %s failed", self.records[i].id)
                    self.reports[i] = self._report_failed(i, f"{type(exc).__name__}: {exc}")
        self._show_status(final=True)
        return [r for r in self.reports if r is not None]

    def _show_status(self, *, final: bool = False) -> None:
        """One line per child on the parent turn's status, whenever what it does changes
        (its status, its tool, its tool count) and once more when the call ends."""
        notify = self.ctx.notify
        if notify is None:
            return
        for record in self.records:
            if record.status == QUEUED and not final:
                continue
            key = (record.status, record.activity, record.tool_calls)
            if key == self._shown.get(record.id) and not final:
                continue
            self._shown[record.id] = key
            self._refresh_cost(record)
            try:
                notify(record.line())
            except Exception:  # a surface's status callback must not fail the call
                log.debug("status callback failed", exc_info=True)

    # ---- one child ----------------------------------------------------------------------------

    def _run_child(self, i: int) -> None:
        record, task = self.records[i], self.tasks[i]
        if (
            self.ctx.cancel.is_set()
            or record.stop_requested
            or board.paused(self.parent_session_id)
        ):
            why = (
                "the parent turn was interrupted"
                if self.ctx.cancel.is_set()
                else "it was stopped"
                if record.stop_requested
                else "spawning is paused (/agents resume)"
            )
            record.status = "not_started"
            self.reports[i] = ChildReport(
                record.id, task.goal, "not_started", "not_started", error=f"not started: {why}"
            )
            return
        try:
            agent = self._spawn(task)
        except Exception as exc:  # an unknown toolset, a model that cannot be reached, …
            record.status = "failed"
            self.reports[i] = self._report_failed(i, str(exc))
            return
        self.agents[i] = agent
        try:
            self._drive(i, agent)
        finally:
            try:
                agent.close()
            except Exception:  # closing must not hide the report
                log.exception("closing sub-agent %s failed", record.id)

    def _spawn(self, task: TaskSpec) -> ChildAgent:
        ctx = self.ctx
        fork = self.mode == "fork"
        rules = ChildRules.for_child(
            depth=self.depth + 1, max_depth=self.settings.max_depth, fork=fork
        )
        parent_tools = _tool_names(self.snapshot.tools) if self.snapshot is not None else None
        assert ctx.config is not None
        config = child_config(ctx.config, task)
        if fork:
            assert self._seed is not None and parent_tools is not None
            options = AgentOptions(
                source=DELEGATE_SOURCE,
                cwd=_cwd(ctx),
                enabled_tools=tuple(parent_tools),
                max_iterations=self.settings.max_iterations,
                parent_session_id=self.parent_session_id,
                delegated=True,
                seed=self._seed,
                # an unattended parent's allow patterns hold for its children too
                unattended_allow=ctx.unattended_allow,
                unattended_hint=ctx.unattended_hint,
                identity=ctx.identity,
            )
            visible = None  # the parent's exact tool list: refusals happen at call time
        else:
            options = AgentOptions(
                source=DELEGATE_SOURCE,
                cwd=_cwd(ctx),
                toolset=CHILD_TOOLSET if task.toolsets else self.settings.toolset,
                max_iterations=self.settings.max_iterations,
                parent_session_id=self.parent_session_id,
                delegated=True,
                caller_system=CHILD_SYSTEM,
                # an unattended parent's allow patterns hold for its children too
                unattended_allow=ctx.unattended_allow,
                unattended_hint=ctx.unattended_hint,
                identity=ctx.identity,  # a child works for the same person
            )
            visible = parent_tools  # never more than the parent has
        spawn: AgentSpawner = ctx.spawn_agent
        return spawn(
            options,
            config=config,
            wrap_registry=lambda base: ChildToolGate(base, rules, visible=visible),
        )

    def _drive(self, i: int, agent: ChildAgent) -> None:
        record, task = self.records[i], self.tasks[i]

        def on_tool_start(name: str, _arguments: str) -> None:
            record.tool_calls += 1
            record.activity = name

        def on_status(message: str) -> None:
            record.activity = " ".join(message.split())[:60]

        humans = Humans(approve=self.relay.for_child(record)) if self.relay is not None else None
        text = self._directive(i, task) if self.mode == "fork" else task.message()
        record.started_at = time.monotonic()
        record.status = RUNNING
        handle = agent.start_turn(
            text,
            callbacks=TurnCallbacks(on_tool_start=on_tool_start, on_status=on_status),
            humans=humans,
        )
        record.handle = handle
        if record.stop_requested or self.ctx.cancel.is_set():
            handle.interrupt()  # a stop that came while it was starting
        timed_out = False
        deadline = record.started_at + self.settings.timeout_seconds
        stop_deadline: float | None = None
        while not handle.wait(POLL_SECONDS):
            now = time.monotonic()
            if record.session_id is None:
                record.session_id = agent.session_id
            if self.ctx.cancel.is_set() and not handle.cancelled:
                handle.interrupt()
            if now >= deadline and not handle.cancelled:
                timed_out = True
                record.activity = "timed out; stopping"
                handle.interrupt()
            if handle.cancelled and stop_deadline is None:
                stop_deadline = now + STOP_GRACE_SECONDS
            if stop_deadline is not None and now >= stop_deadline:
                break  # it does not wind down: report what is on disk and leave it
        record.ended_at = time.monotonic()
        record.session_id = record.session_id or agent.session_id
        try:
            result = handle.result(timeout=0)
        except Exception as exc:  # TimeoutError (it did not stop) or a bug in the turn
            result = None
            error = (
                f"{type(exc).__name__}: {exc}"
                if not isinstance(exc, TimeoutError)
                else ("it did not stop within the grace period")
            )
        else:
            error = result.error
        if timed_out:
            status = "timed_out"
        elif record.stop_requested and not self.ctx.cancel.is_set():
            status = "stopped"
        elif self.ctx.cancel.is_set():
            status = "interrupted"
        elif result is not None and result.completed:
            status = "done"
        else:
            status = "failed"
        record.status = status
        self.reports[i] = self._report(i, agent, result, status, error)
        self._roll_up(record)

    def _directive(self, i: int, task: TaskSpec) -> str:
        total = len(self.tasks)
        return (
            f"[Herald: you are sub-agent {self.records[i].id} of {total}, forked from this "
            "conversation; the delegate_task call above is being answered by the sub-agents. "
            "Do only the task below, then reply with a concise report.]\n\n" + task.message()
        )

    # ---- reports and costs -----------------------------------------------------------------

    def _report(
        self, i: int, agent: Any, result: Any, status: str, error: str | None
    ) -> ChildReport:
        record, task = self.records[i], self.tasks[i]
        store = self.ctx.store
        messages = store.get_messages(record.session_id) if record.session_id and store else []  # type: ignore[attr-defined]
        steps, last_text = transcript_steps(messages)
        registry: ToolRegistry = agent.registry
        session = store.get_session(record.session_id) if record.session_id and store else None  # type: ignore[attr-defined]
        report = ChildReport(
            child_id=record.id,
            goal=task.goal,
            status=status,
            exit_reason=result.exit_reason.value if result is not None else "unknown",
            final_text=clip_final(result.final_text) if result is not None else "",
            files_written=files_written(steps, registry),
            tool_calls=[s.name for s in steps],
            iterations=result.api_calls if result is not None else 0,
            cost_usd=session.estimated_cost_usd
            if session is not None and session.estimated_cost_usd
            else None,
            prompt_tokens=session.prompt_tokens if session is not None else 0,
            completion_tokens=session.completion_tokens if session is not None else 0,
            session_id=record.session_id,
            error=error,
        )
        if status != "done":
            why = {
                "timed_out": f"it reached delegation.timeout_seconds ({self.settings.timeout_seconds:g} s)",
                "stopped": "it was stopped with /agents stop",
                "interrupted": "the parent turn was interrupted",
            }.get(status, error or report.exit_reason)
            report.partial_work = summarise_partial(steps, last_text, why)
        return report

    def _report_failed(self, i: int, error: str) -> ChildReport:
        record = self.records[i]
        record.status = "failed"
        return ChildReport(
            record.id,
            record.goal,
            "failed",
            "not_started",
            error=error,
            session_id=record.session_id,
        )

    def _refresh_cost(self, record: ChildRecord) -> None:
        store = self.ctx.store
        if record.session_id is None or store is None:
            return
        try:
            session = store.get_session(record.session_id)  # type: ignore[attr-defined]
        except Exception:  # a status line must never fail the call
            return
        if session is not None:
            record.cost_usd = session.estimated_cost_usd or 0.0

    def _roll_up(self, record: ChildRecord) -> None:
        """The child's tokens and cost, added to the parent session: one usage row of kind
        ``delegate`` and the session counters (what a spend cap counts)."""
        store = self.ctx.store
        if record.session_id is None or store is None:
            return
        try:
            child = store.get_session(record.session_id)  # type: ignore[attr-defined]
            if child is None:
                return
            counters = {
                "prompt_tokens": child.prompt_tokens,
                "completion_tokens": child.completion_tokens,
                "cache_read_tokens": child.cache_read_tokens,
                "cache_write_tokens": child.cache_write_tokens,
                "reasoning_tokens": child.reasoning_tokens,
            }
            cost = child.estimated_cost_usd or 0.0
            record.cost_usd = cost
            store.record_usage(  # type: ignore[attr-defined]
                self.parent_session_id,
                provider=child.provider or "",
                model=child.model or "",
                kind="delegate",
                cost_usd=cost,
                duration_ms=int(record.elapsed() * 1000),
                finish_reason=child.last_exit_reason,
                **counters,
            )
            store.add_session_usage(self.parent_session_id, cost_usd=cost, **counters)  # type: ignore[attr-defined]
        except Exception:  # the child's own session keeps its usage either way
            log.exception("could not add the usage of sub-agent %s to its parent", record.id)


def _tool_names(tools: tuple[dict[str, Any], ...]) -> list[str]:
    names = []
    for definition in tools:
        function = definition.get("function") if "function" in definition else definition
        name = (function or {}).get("name")
        if isinstance(name, str):
            names.append(name)
    return names


def _cwd(ctx: ToolContext) -> str:
    environment = ctx.environment
    if environment is not None and environment.name in ("local", "bwrap", "docker"):
        try:
            return str(environment.cwd)
        except Exception:  # an environment that cannot say: the process's directory
            log.debug("environment cwd unavailable", exc_info=True)
    return os.getcwd()


__all__ = ["ApprovalRelay", "Delegation", "TaskSpec", "child_config"]
