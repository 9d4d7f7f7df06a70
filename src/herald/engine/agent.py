"""`Agent`: one session, and `run_turn` — prologue, iterations, finalize.

The stages live in their own modules: session.py (create/resume, the frozen
prompt), iteration.py (the loop), model_call.py (retries), intake.py,
tool_round.py, pressure.py (compression) and usage.py. `interrupt()` and
`steer()` are safe to call from any thread while a turn runs.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from herald.config import HeraldConfig, HeraldHome
from herald.context import (
    ContextEngine,
    TokenAccountant,
    call_optional,
    create_engine,
    resolve_context_window,
)
from herald.engine import session as session_stage
from herald.engine.budget import IterationBudget
from herald.engine.callbacks import TurnCallbacks
from herald.engine.handle import Humans, TurnHandle
from herald.engine.iteration import run_iterations
from herald.engine.ports import TranscriptStore
from herald.engine.pressure import compress_history, relieve_pressure
from herald.engine.result import ExitReason, TurnResult
from herald.engine.review import maybe_curate, plan_review, spawn_review
from herald.engine.session import title_from
from herald.engine.steer import SteerQueue
from herald.engine.transcript import PersistenceError, Transcript
from herald.engine.turn_state import TurnState
from herald.engine.usage import record_main_usage, store_usage
from herald.providers import NormalizedResponse
from herald.tools import DEFAULT_BUNDLE, ToolContext, ToolRegistry, ToolSelection, select_tools

if TYPE_CHECKING:
    from herald.config import Secrets, Settings
    from herald.environments import Environment
    from herald.memory import MemoryManager
    from herald.providers import AuxiliaryClient, ModelClient

log = logging.getLogger(__name__)

BACKGROUND_JOIN_SECONDS = 120.0  # a review is a few model calls; never wait forever

__all__ = ["Agent", "AgentOptions", "title_from"]


@dataclass
class AgentOptions:
    source: str = "cli"  # recorded on the session (cli, api, telegram, cron, …)
    platform: str = "cli"  # shown to the model in the system prompt
    cwd: str = field(default_factory=os.getcwd)
    # The toolset bundle the surface exposes (config toolsets.enabled/disabled apply).
    toolset: str = DEFAULT_BUNDLE
    # Explicit tool names instead of the bundle (tests, restricted sub-agents).
    enabled_tools: tuple[str, ...] | None = None
    max_turns: int | None = None  # overrides config agent.max_turns
    parent_budget: IterationBudget | None = None
    caller_system: str | None = None  # a system message the caller supplied (API clients)
    parent_session_id: str | None = None  # lineage: the session this one was forked from


class Agent:
    def __init__(
        self,
        *,
        config: HeraldConfig,
        home: HeraldHome,
        store: TranscriptStore,
        client: ModelClient,
        registry: ToolRegistry | None = None,
        session_id: str | None = None,
        options: AgentOptions | None = None,
        callbacks: TurnCallbacks | None = None,
        secrets: Secrets | None = None,
    ):
        self.config = config
        self.home = home
        self.store = store
        self.client = client
        if registry is None:
            from herald.toolbox import default_registry

            registry = default_registry()
        self.registry = registry
        self.options = options or AgentOptions()
        self.callbacks = callbacks or TurnCallbacks()
        self.cancel_event = threading.Event()
        self.steer_queue = SteerQueue()
        self.secrets = secrets
        self.session_id: str | None = None
        self.system_prompt: str | None = None
        self.session_identity: tuple[str, str] = client.identity()
        self.transcript: Transcript | None = None
        self.tool_context = ToolContext(
            cancel=self.cancel_event,
            home=home,
            config=config,
            secrets=secrets,
            surface=self.options.source,
            store=store,
        )
        # Raises ToolsetError (naming the known toolsets) for an unknown toolset.
        self.enabled_tools: tuple[str, ...] = self._select_tools().names
        self._tools_chars: int | None = None
        self.session_meta: dict[str, Any] = {}
        self.accountant = TokenAccountant()
        # A resumed session was told about an unknown context window when it began.
        self._resuming = session_id is not None
        self.context_engine: ContextEngine = self._create_context_engine()
        self._aux: AuxiliaryClient | None = None
        self.review_thread: threading.Thread | None = None  # the last background review
        self.curator_thread: threading.Thread | None = None
        self._turn_text = ""
        self._turn_lock = threading.Lock()
        self.tool_context.environment = self._create_environment()
        self.memory = self._create_memory()
        if config.approvals.mode == "smart":  # the auxiliary model reviews risky commands first
            from herald.tools.terminal_approval import JUDGE_KEY

            self.tool_context.state[JUDGE_KEY] = self._judge
        if session_id is not None:
            session_stage.resume_session(self, session_id)

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        store: TranscriptStore,
        *,
        session_id: str | None = None,
        options: AgentOptions | None = None,
        callbacks: TurnCallbacks | None = None,
        registry: ToolRegistry | None = None,
    ) -> Agent:
        from herald.providers import ModelClient

        client = ModelClient(settings.config, settings.secrets, settings.home)
        return cls(
            config=settings.config,
            home=settings.home,
            store=store,
            client=client,
            registry=registry,
            session_id=session_id,
            options=options,
            callbacks=callbacks,
            secrets=settings.secrets,
        )

    # ---- controls, callable from other threads -------------------------------------------

    def interrupt(self) -> None:
        self.cancel_event.set()

    def steer(self, text: str) -> None:
        self.steer_queue.push(text)

    # ---- one turn -------------------------------------------------------------------------

    def start_turn(
        self,
        text: str,
        *,
        callbacks: TurnCallbacks | None = None,
        humans: Humans | None = None,
    ) -> TurnHandle:
        """Run one turn on its own thread; the handle interrupts, steers and waits for it.
        Without ``humans`` the turn is unattended (approvals follow the unattended policy).
        One turn runs at a time per agent; a second start waits for the first to end."""
        handle = TurnHandle(cancel=self.cancel_event, steer=self.steer_queue.push)

        def run() -> None:
            with self._turn_lock:
                saved = (self.callbacks, self.tool_context.approve, self.tool_context.clarify)
                self.callbacks = callbacks or TurnCallbacks()
                self.tool_context.approve = humans.approve if humans else None
                self.tool_context.clarify = humans.clarify if humans else None
                try:
                    result = self.run_turn(text)
                except BaseException as exc:  # handed to the caller through result()
                    handle._finish(None, exc)
                    return
                finally:
                    self.callbacks, self.tool_context.approve, self.tool_context.clarify = saved
                handle._finish(result)

        threading.Thread(target=run, name="herald-turn", daemon=True).start()
        return handle

    def run_turn(self, text: str) -> TurnResult:
        max_turns = self.options.max_turns or self.config.agent.max_turns
        turn = TurnState(budget=IterationBudget(max_turns, parent=self.options.parent_budget))
        try:
            self._prologue(text)
            run_iterations(self, turn)
        except PersistenceError as exc:
            log.error("turn stopped: %s", exc)
            turn.end(ExitReason.PERSISTENCE_FAILED, error=str(exc))
        return self._finalize(turn)

    def _prologue(self, text: str) -> None:
        from herald.memory import api_content_for

        # The stop flag is cleared when a turn ends, not when one starts: a stop that lands
        # just before this turn begins still stops it.
        self._tools_chars = None
        self._turn_text = text
        session_stage.ensure_session(self, text)
        assert self.transcript is not None
        self.transcript.start_turn()
        # Recalled memory rides on this message's API copy, never on the system prompt.
        recall = self.memory.begin_turn(text) if self.memory is not None else None
        if recall is not None:
            self.callbacks.status(recall.indicator)
        self.transcript.append(
            {"role": "user", "content": text}, api_content=api_content_for(text, recall)
        )
        relieve_pressure(self)  # preflight: a resumed or grown session may be too big

    def _finalize(self, turn: TurnState) -> TurnResult:
        self.cancel_event.clear()  # per-turn flags reset for the next turn
        if turn.exit_reason == ExitReason.UNKNOWN:  # a bug: every path must name its exit
            log.error("turn ended without a named exit reason")
        log.info(
            "turn ended: %s (api calls %d, tool rounds %d)",
            turn.exit_reason.value,
            turn.api_calls,
            turn.tool_iterations,
        )
        session_id = self.session_id or ""
        plan = plan_review(self, turn, self._turn_text) if self.session_id else None
        if self.session_id is not None:
            try:
                self.store.update_session(self.session_id, last_exit_reason=turn.exit_reason.value)
                session_stage.save_meta(self)
            except Exception as exc:  # the store refused: sqlite error or StateError
                log.error("could not record the end of the turn: %s", exc)
        if plan is not None:  # after the reply exists; the review runs on its own thread
            self.review_thread = spawn_review(self, plan)
        if turn.exit_reason is ExitReason.TEXT_RESPONSE:
            if self.memory is not None:
                self.memory.sync_turn(self._turn_text, turn.final_text)
            self.curator_thread = maybe_curate(self) or self.curator_thread
        added = list(self.transcript.added_this_turn) if self.transcript else []
        return TurnResult(
            final_text=turn.final_text,
            exit_reason=turn.exit_reason,
            session_id=session_id,
            messages_added=added,
            api_calls=turn.api_calls,
            usage=turn.usage,
            estimated_cost_usd=turn.cost_usd,
            error=turn.error,
            leftover_steer=self.steer_queue.drain(),
        )

    # ---- used by the stages ---------------------------------------------------------------

    def request_messages(self) -> list[dict[str, Any]]:
        from herald.engine.request import assemble_messages

        assert self.system_prompt is not None and self.transcript is not None
        return assemble_messages(
            self.system_prompt,
            self.transcript.messages,
            session_identity=self.session_identity,
            active_identity=self.client.identity(),
        )

    def _select_tools(self) -> ToolSelection:
        return select_tools(
            self.registry,
            self.config,
            bundle=self.options.toolset,
            explicit=self.options.enabled_tools,
            profile=self.home.profile_label,
            secrets=self.secrets,
        )

    def tool_definitions(self) -> list[dict[str, Any]] | None:
        """The tools array for this turn (a copy the caller may change); also refreshes
        `enabled_tools`, the names a tool call is checked against."""
        selection = self._select_tools()
        self.enabled_tools = selection.names
        return selection.definitions or None

    def tools_chars(self) -> int:
        """Size of the tools array each request carries (for token estimates)."""
        if self._tools_chars is None:
            self._tools_chars = len(json.dumps(self.tool_definitions() or []))
        return self._tools_chars

    def relieve_pressure(self) -> bool:
        return relieve_pressure(self)

    def try_compress_for_overflow(self) -> bool:
        """The provider said the context overflowed: compress now, whatever the estimate."""
        return compress_history(self, force=True)

    def compress_now(self, focus: str | None = None) -> bool:
        """`/compress [TOPIC]`: compress at the user's request, optionally focused."""
        if self.transcript is None:
            return False
        changed = compress_history(self, focus=focus, force=True)
        return changed

    def save_session_meta(self) -> None:
        session_stage.save_meta(self)

    def record_usage(
        self, turn: TurnState, response: NormalizedResponse, *, duration_ms: int
    ) -> None:
        record_main_usage(self, turn, response, duration_ms=duration_ms)

    def switch_model(self, client: ModelClient) -> None:
        """An explicit model switch: the one event besides compression that rebuilds
        the session's system prompt (invariant 1)."""
        self.client.close()
        self.client = client
        if self.session_id is None:
            self.session_identity = client.identity()
            return
        provider, model = client.identity()
        try:
            self.store.update_session(self.session_id, model=model, provider=provider)
        except Exception as exc:  # the store refused: sqlite error or StateError
            raise PersistenceError(f"could not record the model switch: {exc}") from exc
        session_stage.install_system_prompt(self, session_stage.build_prompt(self))

    # ---- construction helpers -------------------------------------------------------------

    def _create_environment(self) -> Environment:
        from herald.environments import create_environment

        terminal = self.config.terminal
        # The session's cwd applies to a local backend unless terminal.cwd pins one.
        cwd = self.options.cwd if terminal.backend == "local" and not terminal.cwd else None
        return create_environment(self.config, secrets=self.secrets, cwd=cwd)

    def _create_memory(self) -> MemoryManager | None:
        """Built-in memory plus the configured provider; a provider that cannot start is
        reported and the session goes on with built-in memory only."""
        from herald.memory import MemoryManager, MemoryProviderError

        try:
            manager = MemoryManager(self.home, self.config, self.secrets)
            manager.register_provider_tools(self.registry)
        except MemoryProviderError as exc:
            self.callbacks.status(f"memory provider unavailable: {exc}")
            manager = MemoryManager(
                self.home,
                self.config.model_copy(
                    update={"memory": self.config.memory.model_copy(update={"provider": None})}
                ),
                self.secrets,
            )
        manager.attach(self.tool_context)
        return manager

    def _create_context_engine(self) -> ContextEngine:
        _provider, model = self.client.identity()
        window = resolve_context_window(
            model,
            override=self.config.model.context_length,
            default=self.config.context.default_context_window,
            notify=None if getattr(self, "_resuming", False) else self.callbacks.status,
        )
        return create_engine(
            self.config.context.engine,
            config=self.config.context,
            context_window=window,
            summarizer=self._summarize,
        )

    def _aux_client(self) -> AuxiliaryClient:
        from herald.providers import AuxiliaryClient

        if self._aux is None:
            self._aux = AuxiliaryClient(self.config, self.secrets, self.home)
        return self._aux

    def _judge(self, prompt_text: str) -> str:
        """Smart approvals: the auxiliary model's verdict on a flagged command (the prompt
        already fences the command as untrusted data)."""
        response = self._aux_client().complete(
            [{"role": "user", "content": prompt_text}], max_tokens=300, timeout=60
        )
        return response.text or ""

    def _summarize(self, messages: list[dict[str, Any]]) -> str:
        """The compressor's summarizer: the auxiliary model, usage recorded as a side job."""
        import time

        from herald.providers import estimate_cost

        aux = self._aux_client()
        cfg = self.config.context
        started = time.monotonic()
        response = aux.complete(
            messages,
            max_tokens=cfg.summary_max_tokens,
            timeout=cfg.summary_timeout,
            cancel=self.cancel_event,
        )
        if response.usage is not None:
            endpoint = aux.endpoint
            store_usage(
                self,
                response.usage,
                provider=endpoint.provider,
                model=endpoint.model,
                api_mode=endpoint.api_mode,
                kind="summary",
                cost=estimate_cost(endpoint.provider, endpoint.model, response.usage),
                duration_ms=int((time.monotonic() - started) * 1000),
                finish_reason=response.finish_reason,
            )
        return response.text or ""

    def wait_for_background(self, timeout: float = BACKGROUND_JOIN_SECONDS) -> None:
        """Let the learning review and the curator finish their writes."""
        for thread in (self.review_thread, self.curator_thread):
            if thread is not None and thread.is_alive():
                thread.join(timeout)

    def close(self) -> None:
        self.wait_for_background()
        self.client.close()
        if self._aux is not None:
            self._aux.close()
        environment = self.tool_context.environment
        if environment is not None:
            environment.close()
        call_optional(self.context_engine, "on_session_end")
        if self.memory is not None:
            self.memory.shutdown()
