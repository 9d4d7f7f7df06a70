"""`agent_run`: one Herald turn for an MCP client, with progress and relayed approvals.

The turn runs on the engine's thread (`Agent.start_turn`); the tool call, on the
server's event loop, forwards the turn's tool activity and status lines as MCP
progress notifications and waits for the result.

Approvals are put to the client as a form elicitation (once / session / deny):

- on a 2026-07-28 connection the server cannot send requests mid-call, so the call
  returns an ``InputRequiredResult`` carrying the question and a token; the turn
  stays parked on its approval until the client retries with the answer (the SDK's
  client does this by itself), then the same call goes on following the turn;
- on an older connection ``ctx.elicit`` asks in the middle of the call.

A client that did not declare elicitation cannot answer, and with
``mcp.serve.relay_approvals: false`` no client is asked: the turn runs unattended, so
only known read-only commands and ``mcp.serve.allow`` / ``approvals.unattended_allow``
patterns run; everything else is refused. A question nobody answers
within ``approvals.timeout_seconds`` is a denial. Nothing is approved on anyone's
behalf.

Budgets: ``max_iterations`` caps model calls (the engine's iteration budget).
``max_cost_usd`` becomes this turn's ``budget.turn_usd`` (the lower of the two when
the config has one), so the engine refuses a model call whose estimated cost would
cross it before it is sent. Side jobs the turn cap does not see (a compression's
summary) are caught by a check of the session's recorded cost after every step,
which interrupts the turn.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import logging
import secrets
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from herald.config import with_turn_cap
from herald.toolbox import agent_tools, builtin_tools

if TYPE_CHECKING:
    from herald.config import Settings
    from herald.safety import ApprovalPrompt
    from herald.state import StateStore
    from herald.tools import ToolRegistry

log = logging.getLogger(__name__)

PROGRESS_POLL_SECONDS = 0.2
ANSWER_SLACK_SECONDS = 5.0
INPUT_REQUIRED_VERSION = "2026-07-28"
APPROVAL_KEY = "approval"


class ApprovalAnswer(BaseModel):
    decision: Literal["once", "session", "deny"] = Field(
        description="once: allow this action; session: allow it for the rest of this "
        "session; deny: refuse it"
    )


@dataclass
class RunRequest:
    prompt: str
    session_id: str | None = None
    max_iterations: int | None = None
    max_cost_usd: float | None = None


@dataclass
class Question:
    """An approval the engine's thread is waiting on."""

    prompt: ApprovalPrompt
    answer: concurrent.futures.Future[str | None] = field(default_factory=concurrent.futures.Future)


@dataclass
class TurnRun:
    token: str
    handle: Any
    agent: Any
    registry: Any
    session_id: str
    events: asyncio.Queue[Any]
    relayed: bool
    max_cost_usd: float | None
    start_cost: float
    cost_hit: bool = False
    question: Question | None = None


class Runs:
    """Turns parked on a question, by the token the client echoes back."""

    def __init__(self) -> None:
        self.parked: dict[str, TurnRun] = {}


def uses_input_required(ctx: Any) -> bool:
    from mcp_types.version import is_version_at_least

    version = ctx.protocol_version
    return bool(version) and is_version_at_least(version, INPUT_REQUIRED_VERSION)


def client_can_answer(ctx: Any) -> bool:
    caps = ctx.client_capabilities
    return caps is not None and caps.elicitation is not None


def _build_agent(
    settings: Settings, store: StateStore, request: RunRequest, tools: ToolRegistry
) -> tuple[Any, Any, str]:
    """The agent of one agent_run: on `request.session_id` (an id or a unique prefix) or
    on a session created now, with the configured MCP servers' tools over `tools`;
    returns (agent, its registry, session id)."""
    from herald.engine import Agent, AgentOptions, title_from

    serve = settings.config.mcp.serve
    if request.max_cost_usd is not None:
        settings = with_turn_cap(settings, request.max_cost_usd)
    session_id = request.session_id
    if session_id is not None:
        session_id = store.resolve_session_id(session_id)
    agent = Agent.open(
        settings,
        store,
        session_id=session_id,
        source="mcp",
        title=title_from(request.prompt),
        tools=agent_tools(settings, base=tools),
        options=AgentOptions(
            toolset=serve.toolset,
            max_iterations=request.max_iterations or serve.max_iterations,
            # what a turn nobody approves may run beyond the read-only commands
            unattended_allow=tuple(serve.allow),
            unattended_hint="mcp.serve.allow: [{pattern}]",
        ),
    )
    assert agent.session_id is not None
    return agent, agent.registry, agent.session_id


def close_session_agent(agent: Any, registry: Any) -> None:
    agent.close()
    close = getattr(registry, "close", None)  # an MCP overlay stops its servers
    if close is not None:
        close()


def _close(run: TurnRun) -> None:
    close_session_agent(run.agent, run.registry)


def _spent(store: StateStore, session_id: str) -> float:
    record = store.get_session(session_id)
    return record.estimated_cost_usd if record is not None else 0.0


class AgentRunner:
    """Starts, follows and resumes `agent_run` turns for one server."""

    def __init__(self, settings: Settings, store: StateStore) -> None:
        self.settings = settings
        self.store = store
        self.runs = Runs()
        self.tools = builtin_tools()  # the server's tools, shared by its runs' agents

    @property
    def answer_timeout(self) -> float:
        return self.settings.config.approvals.timeout_seconds

    async def call(self, request: RunRequest, ctx: Any) -> Any:
        """The tool body: a JSON result string, or an InputRequiredResult (a question)."""
        token = ctx.request_state
        if token is not None:
            run = self.runs.parked.pop(token, None)
            if run is None:
                raise LookupError(
                    "that agent_run is no longer waiting for an answer (it timed out or "
                    "ended); start a new agent_run, with session_id to continue"
                )
            self._deliver(run, ctx.input_responses)
        else:
            run = await self._start(request, ctx)
        return await self._follow(run, ctx)

    async def _start(self, request: RunRequest, ctx: Any) -> TurnRun:
        from herald.engine import Humans, TurnCallbacks

        loop = asyncio.get_running_loop()
        agent, registry, session_id = await asyncio.to_thread(
            _build_agent, self.settings, self.store, request, self.tools
        )
        events: asyncio.Queue[Any] = asyncio.Queue()

        def push(item: Any) -> None:
            loop.call_soon_threadsafe(events.put_nowait, item)

        callbacks = TurnCallbacks(
            on_tool_start=lambda name, _args: push(f"running {name}"),
            on_tool_end=lambda name, _r, error: push(f"{name} {'failed' if error else 'done'}"),
            on_status=push,
        )
        # mcp.serve.relay_approvals: false means no client ever answers an approval
        relayed = self.settings.config.mcp.serve.relay_approvals and client_can_answer(ctx)
        humans = None
        if relayed:
            if uses_input_required(ctx):
                humans = Humans(approve=self._parking_approver(push))
            else:
                humans = Humans(approve=self._eliciting_approver(ctx, loop))
        run = TurnRun(
            token=secrets.token_urlsafe(16),
            handle=None,
            agent=agent,
            registry=registry,
            session_id=session_id,
            events=events,
            relayed=relayed,
            max_cost_usd=request.max_cost_usd,
            start_cost=_spent(self.store, session_id),
        )
        run.handle = agent.start_turn(request.prompt, callbacks=callbacks, humans=humans)
        await ctx.report_progress(0, None, "started")
        return run

    def _parking_approver(self, push: Any):
        timeout = self.answer_timeout + ANSWER_SLACK_SECONDS

        def approve(prompt: ApprovalPrompt) -> str | None:
            question = Question(prompt)
            push(question)
            try:
                return question.answer.result(timeout)
            except concurrent.futures.TimeoutError:
                return None

        return approve

    def _eliciting_approver(self, ctx: Any, loop: asyncio.AbstractEventLoop):
        timeout = self.answer_timeout + ANSWER_SLACK_SECONDS

        def approve(prompt: ApprovalPrompt) -> str | None:
            future = asyncio.run_coroutine_threadsafe(
                ctx.elicit(prompt.text(), ApprovalAnswer), loop
            )
            try:
                answer = future.result(timeout)
            except Exception as exc:  # no answer (timeout, a client error): a denial
                log.warning("approval request to the MCP client failed: %s", exc)
                future.cancel()
                return None
            return answer.data.decision if answer.action == "accept" else "deny"

        return approve

    def _deliver(self, run: TurnRun, responses: Any) -> None:
        question, run.question = run.question, None
        if question is None:
            return
        decision = "deny"
        answer = (responses or {}).get(APPROVAL_KEY)
        if answer is not None and getattr(answer, "action", None) == "accept":
            content = getattr(answer, "content", None) or {}
            if content.get("decision") in ("once", "session", "deny"):
                decision = content["decision"]
        question.answer.set_result(decision)

    def _ask(self, run: TurnRun, question: Question) -> Any:
        from mcp.server.elicitation import render_elicitation_schema
        from mcp_types import ElicitRequest, ElicitRequestFormParams, InputRequiredResult

        run.question = question
        self.runs.parked[run.token] = run
        loop = asyncio.get_running_loop()
        loop.call_later(self.answer_timeout + 2 * ANSWER_SLACK_SECONDS, self._reap, run.token)
        schema = render_elicitation_schema(ApprovalAnswer)
        request = ElicitRequest(
            params=ElicitRequestFormParams(message=question.prompt.text(), requested_schema=schema)
        )
        return InputRequiredResult(input_requests={APPROVAL_KEY: request}, request_state=run.token)

    def _reap(self, token: str) -> None:
        """A parked turn whose client never came back: its question has timed out (a
        denial), so let it finish on its own and free it."""
        run = self.runs.parked.pop(token, None)
        if run is None:
            return
        log.warning("agent_run %s: the client never answered; the turn goes on unwatched", token)
        asyncio.get_running_loop().create_task(self._finish_unwatched(run))

    async def _finish_unwatched(self, run: TurnRun) -> None:
        await asyncio.to_thread(run.handle.wait, 600)
        await asyncio.to_thread(_close, run)

    async def _follow(self, run: TurnRun, ctx: Any) -> Any:
        step = 0
        try:
            while not run.handle.done:
                try:
                    item = await asyncio.wait_for(run.events.get(), PROGRESS_POLL_SECONDS)
                except TimeoutError:
                    continue
                if isinstance(item, Question):
                    return self._ask(run, item)
                step += 1
                await ctx.report_progress(step, None, str(item))
                self._check_cost(run)
            result = await asyncio.to_thread(run.handle.result)
        except asyncio.CancelledError:  # the client cancelled the request: stop the turn
            run.handle.interrupt()
            await asyncio.shield(asyncio.to_thread(run.handle.wait, 60))
            await asyncio.shield(asyncio.to_thread(_close, run))
            raise
        await asyncio.shield(asyncio.to_thread(_close, run))
        exit_reason, error = result.exit_reason.value, result.error
        configured = self.settings.config.budget.turn_usd
        own_cap = run.max_cost_usd is not None and (
            configured is None or run.max_cost_usd <= configured
        )  # else the config's lower budget.turn_usd stopped it, and its error says so
        if run.cost_hit or (own_cap and result.spend_cap == "budget.turn_usd"):
            exit_reason = "cost_budget_exhausted"
            error = (
                f"max_cost_usd (${run.max_cost_usd:.2f}) would be passed, so Herald stopped "
                f"after ${result.estimated_cost_usd:.2f}; call agent_run again with this "
                "session_id and a larger max_cost_usd to continue"
            )
        return json.dumps(
            {
                "final_text": result.final_text,
                "exit_reason": exit_reason,
                "error": error,
                "session_id": result.session_id or run.session_id,
                "api_calls": result.api_calls,
                "estimated_cost_usd": result.estimated_cost_usd,
                "approvals": "relayed" if run.relayed else "unattended (denied)",
            },
            ensure_ascii=False,
        )

    def _check_cost(self, run: TurnRun) -> None:
        """The backstop for side jobs: the session's recorded cost since the turn began."""
        if run.max_cost_usd is None or run.cost_hit:
            return
        if _spent(self.store, run.session_id) - run.start_cost >= run.max_cost_usd:
            run.cost_hit = True
            run.handle.interrupt()
