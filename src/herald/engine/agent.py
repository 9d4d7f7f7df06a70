"""`Agent`: one session, and the turns run on it.

An `Agent` is a session: it holds the session's collaborators (`SessionRuntime`)
and starts turns. `start_turn()` gives every turn its own `TurnHandle` (cancel
event, steer queue), its own callbacks and its own `Humans`; the stages get a
frozen `TurnContext` and never see the Agent (turn.py, iteration.py,
model_call.py, tool_round.py, pressure.py, session.py, review.py, hygiene.py).
Surfaces never assign an Agent attribute: everything per turn is an argument.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from herald.checkpoints import CheckpointService
from herald.config import HeraldConfig, HeraldHome, first_time
from herald.context import (
    ContextEngine,
    TokenAccountant,
    create_engine,
    engine_names,
    resolve_context_window,
)
from herald.engine.budget import IterationBudget
from herald.engine.callbacks import TurnCallbacks
from herald.engine.handle import Humans, TurnControls, TurnHandle
from herald.engine.hygiene import ContextStatus, context_status
from herald.engine.options import AgentOptions
from herald.engine.ports import TranscriptStore
from herald.engine.pressure import compress_history
from herald.engine.request import request_snapshot
from herald.engine.result import ExitReason, TurnResult
from herald.engine.session import (
    build_prompt,
    ensure_session,
    install_system_prompt,
    resume_session,
    title_from,
    update_meta,
)
from herald.engine.spend import SideCallRefused, check_side_call
from herald.engine.tool_round import NestedToolCalls
from herald.engine.transcript import PersistenceError
from herald.engine.turn import Background, run_turn
from herald.engine.turn_context import (
    RuntimeParts,
    SessionRuntime,
    SessionState,
    ToolView,
    TurnContext,
)
from herald.engine.turn_state import TurnState
from herald.engine.usage import store_usage
from herald.tools import ToolContext, ToolRegistry

if TYPE_CHECKING:
    from herald.config import Secrets, Settings
    from herald.engine.transcript import Transcript
    from herald.environments import Environment
    from herald.memory import MemoryManager
    from herald.providers import AuxiliaryClient, ModelClient
    from herald.providers.images import ImageRef

log = logging.getLogger(__name__)

BACKGROUND_JOIN_SECONDS = 120.0  # a review is a few model calls; never wait forever

__all__ = ["Agent", "AgentOptions", "title_from"]


class Agent(RuntimeParts):
    """One session. Its turns run one at a time; each is started with `start_turn`."""

    def __init__(
        self,
        *,
        config: HeraldConfig,
        home: HeraldHome,
        store: TranscriptStore,
        client: ModelClient,
        tools: ToolRegistry,
        session_id: str | None = None,
        options: AgentOptions | None = None,
        callbacks: TurnCallbacks | None = None,
        secrets: Secrets | None = None,
    ):
        """`tools`: the registry the surface composed (herald.toolbox); the agent adds its
        own tools (plugins', a memory provider's) on an overlay of it, never to it."""
        registry = tools
        options = options or AgentOptions()
        # Callbacks for turns started without their own (`run_turn`, tests).
        self.callbacks = callbacks or TurnCallbacks()
        self._aux: AuxiliaryClient | None = None
        self._turn_lock = threading.Lock()
        self._controls_lock = threading.Lock()
        self._current: TurnControls | None = None
        self._pending_stop = False
        self._pending_steer: list[str] = []
        self._background = Background()
        self._closed = False
        tool_context = ToolContext(
            home=home,
            config=config,
            secrets=secrets,
            surface=options.source,
            store=store,
            unattended_allow=tuple(options.unattended_allow),
            unattended_hint=options.unattended_hint,
            origin=options.origin,
            chat_files=options.chat_files,
            delegated=options.delegated,
            identity=options.identity,
        )
        from herald.plugins import plugins_for

        # The enabled plugins; their tools sit under this agent's overlay, appended after
        # the built-ins (never on the process registry another profile's agent reads).
        self._plugins = plugins_for(config, home, secrets, cwd=options.cwd)
        registry = self._plugins.tool_registry(registry)
        # The agent's own tools (a memory provider's) live on this overlay, never on
        # the shared registry another profile's agent reads.
        tools = registry.overlay()
        context_engine = self._create_context_engine(
            config, client, home, resuming=session_id is not None
        )
        runtime = SessionRuntime(
            config=config,
            home=home,
            secrets=secrets,
            store=store,
            options=options,
            tools=tools,
            context_engine=context_engine,
            accountant=TokenAccountant(),
            tool_context=tool_context,
            state=SessionState(client=client, identity=client.identity()),
            hooks=self._plugins.hooks,
        )
        runtime.select_tools()  # raises ToolsetError (naming the known ones) early
        environment = tool_context.environment = _create_environment(config, secrets, options)
        # Snapshots of the workdir before a turn changes it (/rollback restores them).
        self.checkpoints = CheckpointService(
            config.checkpoints,
            home.root,
            backend=environment.name,
            workdir=lambda: environment.cwd,
            session_id=lambda: self.session_id,
        )
        self.runtime = dataclasses.replace(runtime, memory=self._create_memory(runtime))
        for message in self._plugins.unannounced():  # disabled plugins, clashes: said once
            self.callbacks.status(message)
        if config.approvals.mode == "smart":  # the auxiliary model reviews risky commands first
            tool_context.judge = self._judge
        if session_id is not None:
            resume_session(self.runtime, session_id)

    @classmethod
    def open(
        cls,
        settings: Settings,
        store: TranscriptStore,
        *,
        session_id: str | None = None,
        source: str,
        title: str | None = None,
        tools: ToolRegistry,
        options: AgentOptions | None = None,
        callbacks: TurnCallbacks | None = None,
        config: HeraldConfig | None = None,
        client: ModelClient | None = None,
    ) -> Agent:
        """The one way a surface opens a session's agent: resume `session_id` (LookupError
        if there is none), or start a new session from `source`. With `title` a new
        session is created now, titled after it (a surface that must know the id before
        the first turn); without, the first turn creates it, titled after its text.

        `tools` is the surface's registry (herald.toolbox); `config` overrides the
        settings' (a session's own model, an identity's hidden tools). What is made here
        (the client, the agent) is closed again if opening fails (PersistenceError when
        the store refuses the new session)."""
        from herald.providers import ModelClient

        options = dataclasses.replace(options or AgentOptions(), source=source)
        config = config or settings.config
        made = client is None
        client = client or ModelClient(config, settings.secrets, settings.home)
        try:
            agent = cls(
                config=config,
                home=settings.home,
                store=store,
                client=client,
                tools=tools,
                session_id=session_id,
                options=options,
                callbacks=callbacks,
                secrets=settings.secrets,
            )
        except BaseException:
            if made:
                client.close()
            raise
        if title is not None and session_id is None:
            try:
                agent.open_session(title)
            except BaseException:
                agent.close()
                raise
        return agent

    def open_session(self, first_text: str = "") -> str:
        """The session's id, creating the session now (titled after `first_text`) if it
        does not exist yet; a surface that must know the id before the first turn (to
        map a chat to it) calls this. Raises PersistenceError if the store refuses."""
        ensure_session(self.runtime, first_text)
        assert self.runtime.state.id is not None
        return self.runtime.state.id

    # ---- read-only views of the session ---------------------------------------------------

    @property
    def home(self) -> HeraldHome:
        return self.runtime.home

    @property
    def secrets(self) -> Secrets | None:
        return self.runtime.secrets

    @property
    def registry(self) -> ToolRegistry:
        return self.runtime.tools

    @property
    def client(self) -> ModelClient:
        return self.runtime.state.client

    @property
    def session_id(self) -> str | None:
        return self.runtime.state.id

    @property
    def transcript(self) -> Transcript | None:
        return self.runtime.state.transcript

    @property
    def system_prompt(self) -> str | None:
        return self.runtime.state.system_prompt

    @property
    def session_identity(self) -> tuple[str, str]:
        return self.runtime.state.identity

    @property
    def session_meta(self) -> dict[str, Any]:
        return dict(self.runtime.state.meta)

    @property
    def review_thread(self) -> threading.Thread | None:
        return self._background.review

    @property
    def curator_thread(self) -> threading.Thread | None:
        return self._background.curator

    @property
    def tool_context(self) -> ToolContext:
        """The session's tool context; each turn's tools get a copy carrying that turn's
        cancel event and humans. (Surfaces: pass `humans=` to `start_turn` instead of
        setting `approve`/`clarify` here; `run_turn` still honours them.)"""
        return self.runtime.tool_context

    @property
    def enabled_tools(self) -> tuple[str, ...]:
        return self.runtime.select_tools().names

    def tool_definitions(self) -> list[dict[str, Any]] | None:
        """The tools array a turn would send now (a copy the caller may change)."""
        return self.runtime.select_tools().definitions or None

    def context_status(self) -> ContextStatus:
        """How full the session's context is: estimated tokens, window, messages."""
        return context_status(self.runtime, ToolView.of(self.runtime).chars)

    def update_session_meta(self, **updates: Any) -> None:
        """Set keys of the session's meta (None removes one); written to disk first."""
        update_meta(self.runtime, updates)

    # ---- turns ------------------------------------------------------------------------------

    def start_turn(
        self,
        text: str,
        *,
        callbacks: TurnCallbacks | None = None,
        humans: Humans | None = None,
        executor: Executor | None = None,
        images: Sequence[ImageRef] = (),
    ) -> TurnHandle:
        """Run one turn on its own thread (or on ``executor``); the handle interrupts,
        steers and waits for it. Without ``humans`` the turn is unattended (approvals
        follow the unattended policy). One turn runs at a time per agent; a second
        start waits for the first to end. ``images`` (from `attach_image`) go with the
        user's message."""
        handle = TurnHandle()

        def run() -> None:
            try:
                result = self._run(
                    text, handle.controls, callbacks or TurnCallbacks(), humans, tuple(images)
                )
            except BaseException as exc:  # handed to the caller through result()
                handle._finish(None, exc)
                return
            handle._finish(result)

        if executor is not None:
            executor.submit(run)
        else:
            threading.Thread(target=run, name="herald-turn", daemon=True).start()
        return handle

    def run_turn(self, text: str) -> TurnResult:
        """Run one turn here and now, with the agent's own callbacks and the humans set
        on `tool_context` (kept for the surfaces that have not moved to `start_turn`)."""
        ctx = self.runtime.tool_context
        humans = (
            Humans(approve=ctx.approve, clarify=ctx.clarify)
            if ctx.approve is not None or ctx.clarify is not None
            else None
        )
        return self._run(text, TurnControls(), self.callbacks, humans)

    def interrupt(self) -> None:
        """Stop the running turn; between turns, the next one to start (a stop that
        races a turn's start). Prefer the turn's own `TurnHandle.interrupt()`."""
        with self._controls_lock:
            if self._current is not None:
                self._current.cancel.set()
            else:
                self._pending_stop = True

    def steer(self, text: str) -> None:
        """Steer the running turn; between turns, the next one. Prefer the handle's."""
        with self._controls_lock:
            if self._current is None or not self._current.steer.push(text):
                self._pending_steer.append(text)

    def _run(
        self,
        text: str,
        controls: TurnControls,
        callbacks: TurnCallbacks,
        humans: Humans | None,
        images: tuple[ImageRef, ...] = (),
    ) -> TurnResult:
        with self._turn_lock:
            with self._controls_lock:
                self._current = controls
                if self._pending_stop:
                    controls.cancel.set()
                for item in self._pending_steer:
                    controls.steer.push(item)
                self._pending_stop, self._pending_steer = False, []
            try:
                return self._run_locked(text, controls, callbacks, humans, images)
            finally:
                with self._controls_lock:
                    self._current = None

    def _run_locked(
        self,
        text: str,
        controls: TurnControls,
        callbacks: TurnCallbacks,
        humans: Humans | None,
        images: tuple[ImageRef, ...] = (),
    ) -> TurnResult:
        rt = self.runtime
        limit = rt.options.max_iterations or rt.config.agent.max_iterations
        turn = TurnState(budget=IterationBudget(limit, parent=rt.options.parent_budget))
        try:
            ensure_session(rt, text)
        except PersistenceError as exc:
            log.error("turn stopped: %s", exc)
            turn.end(ExitReason.PERSISTENCE_FAILED, error=str(exc))
            return TurnResult(
                final_text="",
                exit_reason=turn.exit_reason,
                session_id="",
                error=turn.error,
                leftover_steer=controls.steer.close(),
            )
        ctx = self._turn_context(text, controls, callbacks, humans, images)
        result, background = run_turn(ctx, turn)
        self._background = Background(
            background.review or self._background.review,
            background.curator or self._background.curator,
        )
        return result

    def _turn_context(
        self,
        text: str,
        controls: TurnControls,
        callbacks: TurnCallbacks,
        humans: Humans | None,
        images: tuple[ImageRef, ...] = (),
    ) -> TurnContext:
        rt = self.runtime
        assert rt.state.transcript is not None
        tool_context = dataclasses.replace(
            rt.tool_context,
            cancel=controls.cancel,
            approve=humans.approve if humans else None,
            clarify=humans.clarify if humans else None,
            notify=callbacks.status,
            spawn_agent=self.spawn,
            checkpoint=self.checkpoints.turn(),
            look=self._look,
        )
        ctx = TurnContext(
            runtime=rt,
            client=rt.state.client,
            tools=ToolView.of(rt),
            transcript=rt.state.transcript,
            callbacks=callbacks,
            cancel=controls.cancel,
            steer=controls.steer,
            humans=humans,
            tool_context=tool_context,
            user_text=text,
            user_images=images,
            make_reviewer=self.fork,
        )
        tool_context.parent_request = functools.partial(request_snapshot, ctx)
        tool_context.nested_tools = NestedToolCalls(ctx)
        return ctx

    def fork(self, options: AgentOptions) -> Agent:
        """A child agent on this one's home, store and tools, in a new session of its own
        (the background reviewer, which runs on the auxiliary model when one is set)."""
        return self.spawn(options)

    def spawn(
        self,
        options: AgentOptions,
        *,
        config: HeraldConfig | None = None,
        wrap_registry: Callable[[ToolRegistry], ToolRegistry] | None = None,
    ) -> Agent:
        """A sub-agent (herald.delegation, through `ToolContext.spawn_agent`): a new session
        of its own on this one's home and store, with ``config`` (default: this one's) and
        this agent's tools, seen through ``wrap_registry`` when given. A background review
        runs on the auxiliary model when one is configured (a cheaper side-job model)."""
        from herald.providers import ModelClient

        rt = self.runtime
        config = config or rt.config
        tools = wrap_registry(rt.tools) if wrap_registry is not None else rt.tools
        chain = None
        aux = config.auxiliary
        if options.source == "review" and (aux.provider or aux.name) and rt.secrets is not None:
            from herald.providers import resolve_auxiliary

            chain = [resolve_auxiliary(config, rt.secrets)]
        return Agent(
            config=config,
            home=rt.home,
            store=rt.store,
            client=ModelClient(config, rt.secrets, rt.home, chain=chain),
            tools=tools,
            options=options,
            secrets=rt.secrets,
        )

    # ---- between turns -----------------------------------------------------------------------

    def compress_now(
        self, focus: str | None = None, *, callbacks: TurnCallbacks | None = None
    ) -> bool:
        """`/compress [TOPIC]`: compress at the user's request, optionally focused; the
        notices go to ``callbacks`` (this call's only), else to the agent's own."""
        if self.transcript is None:
            return False
        with self._turn_lock:
            ctx = self._turn_context("", TurnControls(), callbacks or self.callbacks, None)
            return compress_history(ctx, focus=focus, force=True)

    def switch_model(self, client: ModelClient) -> None:
        """An explicit model switch: the one event besides compression that rebuilds
        the session's system prompt (invariant 1)."""
        rt = self.runtime
        with self._turn_lock:
            rt.state.client.close()
            rt.state.client = client
            if rt.state.id is None:
                rt.state.identity = client.identity()
                return
            provider, model = client.identity()
            try:
                rt.store.update_session(rt.state.id, model=model, provider=provider)
            except Exception as exc:  # the store refused: sqlite error or StateError
                raise PersistenceError(f"could not record the model switch: {exc}") from exc
            install_system_prompt(rt, build_prompt(rt))

    # ---- construction helpers -------------------------------------------------------------

    def _create_memory(self, rt: SessionRuntime) -> MemoryManager | None:
        """Built-in memory plus the configured provider (its tools on this agent's
        overlay); a provider that cannot start is reported and the session goes on with
        built-in memory only."""
        from herald.memory import MemoryManager, MemoryProviderError

        try:
            manager = MemoryManager(
                rt.home,
                rt.config,
                rt.secrets,
                provider=self._plugins.memory_provider(rt.config),
                identity=rt.options.identity,
            )
            manager.register_provider_tools(rt.tools)
        except MemoryProviderError as exc:
            self.callbacks.status(f"memory provider unavailable: {exc}")
            manager = MemoryManager(
                rt.home,
                rt.config.model_copy(
                    update={"memory": rt.config.memory.model_copy(update={"provider": None})}
                ),
                rt.secrets,
                identity=rt.options.identity,
            )
        manager.attach(rt.tool_context)
        return manager

    def _create_context_engine(
        self,
        config: HeraldConfig,
        client: ModelClient,
        home: HeraldHome,
        *,
        resuming: bool = False,
    ) -> ContextEngine:
        _provider, model = client.identity()
        window = resolve_context_window(
            model,
            override=config.model.context_length,
            default=config.context.default_context_window,
            # A resumed session was told about an unknown context window when it began.
            notify=None if resuming else self.callbacks.status,
            # … and a home is told once per model (`herald doctor` says it every time).
            first_time=lambda key: first_time(home.cache_dir, key),
        )
        return create_engine(
            config.context.engine,
            plugin_engines=self._plugins.context_engine_factories(engine_names()),
            config=config.context,
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
        already fences the command as untrusted data). Past a spending cap it is not
        asked, and the command goes to a human (or the unattended default) instead."""
        from herald.safety import JudgeSkipped

        try:
            return self._side_call(
                [{"role": "user", "content": prompt_text}], "judge", max_tokens=300, timeout=60
            )
        except SideCallRefused as exc:
            raise JudgeSkipped(str(exc)) from None

    def attach_image(self, path: str | Path) -> ImageRef:
        """Keep an image the user attached under the home, fitted to `vision.*` limits,
        for `start_turn(images=...)`; ImageError says what is wrong with it."""
        from herald.providers.images import store_image

        limits = self.config.vision
        return store_image(
            path, self.home.root, max_edge=limits.max_edge_px, max_bytes=limits.max_bytes
        )

    def _look(self, messages: list[dict[str, Any]]) -> str:
        """vision_analyze's call: the auxiliary model, under the spending caps."""
        return self._side_call(messages, "vision", max_tokens=1000, timeout=120)

    def _summarize(self, messages: list[dict[str, Any]]) -> str:
        """The compressor's summarizer (invariant 15: refused past a cap, the compressor
        falls back to its own summary)."""
        cfg = self.config.context
        return self._side_call(
            messages, "summary", max_tokens=cfg.summary_max_tokens, timeout=cfg.summary_timeout
        )

    def _side_call(
        self, messages: list[dict[str, Any]], kind: str, *, max_tokens: int, timeout: float
    ) -> str:
        """One auxiliary-model call outside the turn loop: checked against the spending
        caps first (SideCallRefused), its usage recorded under `kind`."""
        import time

        from herald.providers import estimate_cost
        from herald.providers.images import content_chars

        aux = self._aux_client()
        refused = check_side_call(
            self.config,
            self.store,
            session_id=self.session_id,
            source=self.options.source,
            endpoint=(aux.endpoint.provider, aux.endpoint.model),
            prompt_chars=sum(content_chars(m.get("content")) for m in messages),
            max_output=max_tokens,
        )
        if refused is not None:
            raise SideCallRefused(refused)
        started = time.monotonic()
        response = aux.complete(
            messages,
            max_tokens=max_tokens,
            timeout=timeout,
            cancel=current.cancel if (current := self._current) is not None else None,
        )
        if response.usage is not None:
            endpoint = aux.endpoint
            store_usage(
                self.store,
                self.session_id,
                response.usage,
                provider=endpoint.provider,
                model=endpoint.model,
                api_mode=endpoint.api_mode,
                kind=kind,
                cost=estimate_cost(endpoint.provider, endpoint.model, response.usage, self.config),
                duration_ms=int((time.monotonic() - started) * 1000),
                finish_reason=response.finish_reason,
            )
        return response.text or ""

    def wait_for_background(self, timeout: float = BACKGROUND_JOIN_SECONDS) -> None:
        """Let the learning review and the curator finish their writes."""
        for thread in (self.review_thread, self.curator_thread):
            if thread is not None and thread.is_alive():
                thread.join(timeout)

    @property
    def closed(self) -> bool:
        """close() has run: the session's handles (client, tools, environment) are released."""
        return self._closed

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.wait_for_background()
        self.client.close()
        if self._aux is not None:
            self._aux.close()
        self.tool_context.close_owned()  # a browser, before the environment it writes to
        environment = self.tool_context.environment
        if environment is not None:
            environment.close()
        self.context_engine.on_session_end()
        if self.session_id is not None:
            self.runtime.hooks.emit("on_session_end", session_id=self.session_id)
        if self.memory is not None:
            self.memory.shutdown()
        self.runtime.tools.close()


def _create_environment(
    config: HeraldConfig, secrets: Secrets | None, options: AgentOptions
) -> Environment:
    from herald.environments import create_environment

    terminal = config.terminal
    # The session's cwd applies to a backend on this machine (local, or a sandbox
    # mounting it) unless terminal.cwd pins one.
    on_this_machine = terminal.backend in ("local", "bwrap", "docker")
    cwd = options.cwd if on_this_machine and not terminal.cwd else None
    return create_environment(config, secrets=secrets, cwd=cwd)
