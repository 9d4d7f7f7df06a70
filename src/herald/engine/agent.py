"""`Agent`: one session, and `run_turn` — prologue, iterations, finalize.

The stages live in their own modules (prologue here is short enough to
inline; iteration.py, model_call.py, tool_round.py, intake.py). `interrupt()`
and `steer()` are safe to call from any thread while a turn runs.
"""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from herald.config import HeraldConfig, HeraldHome
from herald.context import PromptInputs, build_system_prompt, identity_of
from herald.engine.budget import IterationBudget
from herald.engine.callbacks import TurnCallbacks
from herald.engine.iteration import run_iterations
from herald.engine.ports import TranscriptStore
from herald.engine.repair import repair_transcript
from herald.engine.result import ExitReason, TurnResult
from herald.engine.steer import SteerQueue
from herald.engine.transcript import PersistenceError, Transcript
from herald.engine.turn_state import TurnState
from herald.providers import NormalizedResponse, Usage
from herald.tools import ToolContext, ToolRegistry
from herald.tools import registry as default_registry

if TYPE_CHECKING:
    from herald.config import Settings
    from herald.providers import ModelClient

log = logging.getLogger(__name__)

TITLE_CHARS = 60


@dataclass
class AgentOptions:
    source: str = "cli"  # recorded on the session (cli, api, telegram, cron, …)
    platform: str = "cli"  # shown to the model in the system prompt
    cwd: str = field(default_factory=os.getcwd)
    enabled_tools: tuple[str, ...] = ("todo",)
    max_turns: int | None = None  # overrides config agent.max_turns
    parent_budget: IterationBudget | None = None


def title_from(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1] + "…"


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
    ):
        self.config = config
        self.home = home
        self.store = store
        self.client = client
        self.registry = registry or default_registry
        self.options = options or AgentOptions()
        self.callbacks = callbacks or TurnCallbacks()
        self.cancel_event = threading.Event()
        self.steer_queue = SteerQueue()
        self.enabled_tools = tuple(
            n for n in self.options.enabled_tools if self.registry.get(n) is not None
        )
        self.session_id: str | None = None
        self.system_prompt: str | None = None
        self.session_identity: tuple[str, str] = client.identity()
        self.transcript: Transcript | None = None
        self.tool_context = ToolContext(cancel=self.cancel_event)
        self._tool_defs: list[dict[str, Any]] | None = None
        if session_id is not None:
            self._resume(session_id)

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
        )

    # ---- controls, callable from other threads -------------------------------------------

    def interrupt(self) -> None:
        self.cancel_event.set()

    def steer(self, text: str) -> None:
        self.steer_queue.push(text)

    # ---- one turn -------------------------------------------------------------------------

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
        self.cancel_event.clear()  # per-turn flags start clean
        self._ensure_session(text)
        assert self.transcript is not None
        self.transcript.start_turn()
        self.transcript.append({"role": "user", "content": text})

    def _finalize(self, turn: TurnState) -> TurnResult:
        if turn.exit_reason == ExitReason.UNKNOWN:  # a bug: every path must name its exit
            log.error("turn ended without a named exit reason")
        log.info(
            "turn ended: %s (api calls %d, tool rounds %d)",
            turn.exit_reason.value,
            turn.api_calls,
            turn.tool_iterations,
        )
        session_id = self.session_id or ""
        if self.session_id is not None:
            try:
                self.store.update_session(self.session_id, last_exit_reason=turn.exit_reason.value)
            except Exception as exc:  # the store refused: sqlite error or StateError
                log.error("could not record the exit reason: %s", exc)
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

    # ---- session and prompt ---------------------------------------------------------------

    def _ensure_session(self, first_text: str) -> None:
        if self.session_id is not None:
            return
        provider, model = self.client.identity()
        try:
            sid = self.store.create_session(
                profile=self.home.profile_label,
                source=self.options.source,
                model=model,
                provider=provider,
                title=title_from(first_text),
            )
        except Exception as exc:  # the store refused: sqlite error or StateError
            raise PersistenceError(f"could not create a session: {exc}") from exc
        self.session_id = sid
        self.tool_context.session_id = sid
        self.transcript = Transcript(self.store, sid)
        self._install_system_prompt(self._build_system_prompt())

    def _resume(self, session_id: str) -> None:
        session = self.store.get_session(session_id)
        if session is None:
            raise LookupError(f"no session {session_id!r}")
        self.session_id = session.id
        self.tool_context.session_id = session.id
        self.transcript = Transcript(self.store, session.id)
        stored = (
            self.store.get_system_prompt(session.system_prompt_hash)
            if session.system_prompt_hash
            else None
        )
        if stored is None:
            self._install_system_prompt(self._build_system_prompt())
        else:
            self.system_prompt = stored
            provider, model = identity_of(stored)
            self.session_identity = (provider or "", model or "")
        report = repair_transcript(self.transcript.load())
        if report.changed:
            log.warning(
                "repaired session %s: %d missing tool results, %d orphaned results",
                session.id,
                report.inserted,
                report.dropped_orphans,
            )
        if report.tail_results:  # a crash between a tool call and its result
            self.store.append_messages(session.id, report.tail_results)
        self.transcript.messages = report.messages
        self.registry.restore_state(report.messages, self.tool_context)

    def _build_system_prompt(self) -> str:
        provider, model = self.client.identity()
        soul = None
        try:
            soul = self.home.soul_path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            pass
        return build_system_prompt(
            PromptInputs(
                model=model,
                provider=provider,
                cwd=self.options.cwd,
                session_id=self.session_id or "",
                platform=self.options.platform,
                identity=soul,
                tool_names=self.enabled_tools,
            )
        )

    def _install_system_prompt(self, text: str) -> None:
        assert self.session_id is not None
        try:
            prompt_hash = self.store.put_system_prompt(text)
            self.store.update_session(self.session_id, system_prompt_hash=prompt_hash)
        except Exception as exc:  # the store refused: sqlite error or StateError
            raise PersistenceError(f"could not store the system prompt: {exc}") from exc
        self.system_prompt = text
        self.session_identity = self.client.identity()

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

    def tool_definitions(self) -> list[dict[str, Any]] | None:
        if self._tool_defs is None:
            self._tool_defs = self.registry.definitions(self.enabled_tools)
        return [dict(d) for d in self._tool_defs] or None

    def try_compress_for_overflow(self) -> bool:
        """Shrink the history after a context-overflow error. The foundation has no
        context engine yet, so nothing can be reclaimed."""
        return False

    def record_usage(self, turn: TurnState, response: NormalizedResponse, *, duration_ms: int) -> None:
        from herald.providers import estimate_cost

        usage = response.usage or Usage()
        turn.usage = turn.usage + usage
        provider, model = self.client.identity()
        cost = estimate_cost(provider, model, usage)
        turn.add_cost(cost)
        if self.session_id is None:
            return
        counters = {
            "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens,
            "cache_read_tokens": usage.cache_read_tokens,
            "cache_write_tokens": usage.cache_write_tokens,
            "reasoning_tokens": usage.reasoning_tokens,
        }
        try:
            self.store.record_usage(
                self.session_id,
                provider=provider,
                model=model,
                api_mode=self.client.endpoint.api_mode,
                kind="main",
                cost_usd=cost or 0.0,
                duration_ms=duration_ms,
                finish_reason=response.finish_reason,
                **counters,
            )
            self.store.add_session_usage(
                self.session_id, api_calls=1, cost_usd=cost or 0.0, **counters
            )
        except Exception as exc:  # the store refused: sqlite error or StateError
            raise PersistenceError(f"could not record usage: {exc}") from exc

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
        self._install_system_prompt(self._build_system_prompt())

    def close(self) -> None:
        self.client.close()
