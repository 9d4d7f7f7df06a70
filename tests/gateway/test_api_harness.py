"""Support for the API and webhook adapter tests (no tests of its own).

`AgentSink` is a small but real `EventSink`: each dispatch runs a real
`herald.engine.Agent` turn (in a worker thread) against the fake LLM server and keeps
one session per (platform, session key), honouring the adapters' conventions
(``bind_session(event, id)`` points a key at a stored session, ``raw["caller_system"]``
becomes `AgentOptions.caller_system`, an event uses the ``herald-<platform>`` toolset,
so webhooks get ``herald-webhook``), the way `GatewayRunner` does. `running_adapter` serves an adapter on an event loop in a
background thread, so tests can use blocking clients such as the official `openai`
package against it.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from herald.config import Settings
from herald.engine import Agent, AgentOptions, TurnCallbacks
from herald.gateway import DispatchResult, MessageEvent, PlatformAdapter, StreamCallbacks
from herald.state import StateStore
from herald.testing.homes import fake_model_config, make_home, merge

T = TypeVar("T")


class LoopThread:
    """An asyncio loop running in its own thread (the gateway's loop, in tests)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="test-loop", daemon=True)
        self._thread.start()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 30.0) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5)
        self.loop.close()


@dataclass
class Dispatched:
    event: MessageEvent
    toolset: str
    session_id: str | None = None


def session_key(event: MessageEvent) -> tuple[str, str, str]:
    # Like build_session_key: a named session is one identity's name for it.
    return (event.platform, event.identity or "owner", event.session_hint or event.chat_id)


@dataclass
class AgentSink:
    settings: Settings
    store: StateStore
    workdir: Path
    sessions: dict[tuple[str, str, str], str] = field(default_factory=dict)
    dispatched: list[Dispatched] = field(default_factory=list)
    before_turn: Callable[[MessageEvent], None] | None = None

    def bind_session(self, event: MessageEvent, session_id: str) -> None:
        self.sessions[session_key(event)] = session_id

    async def dispatch(
        self,
        event: MessageEvent,
        adapter: PlatformAdapter,
        *,
        stream: StreamCallbacks | None = None,
    ) -> DispatchResult:
        raw = event.raw if isinstance(event.raw, dict) else {}
        toolset = f"herald-{event.platform}"
        record = Dispatched(event, toolset)
        self.dispatched.append(record)
        if self.before_turn is not None:
            self.before_turn(event)
        key = session_key(event)
        session_id = self.sessions.get(key)
        options = AgentOptions(
            source=event.platform,
            platform=event.platform,
            cwd=str(self.workdir),
            toolset=toolset,
            caller_system=raw.get("caller_system"),
            identity=event.identity or "owner",
        )
        callbacks = TurnCallbacks(on_text_delta=stream.on_text_delta if stream else None)

        def turn() -> Any:
            agent = Agent.from_settings(
                self.settings,
                self.store,
                session_id=session_id,
                options=options,
                callbacks=callbacks,
            )
            try:
                return agent.run_turn(event.text)
            finally:
                agent.close()

        result = await asyncio.to_thread(turn)
        self.sessions.setdefault(key, result.session_id)
        record.session_id = result.session_id
        usage = result.usage
        return DispatchResult(
            status="replied" if result.completed else "error",
            text=result.final_text if result.completed else (result.error or "the turn failed"),
            session_id=result.session_id,
            exit_reason=result.exit_reason.value,
            usage={
                "prompt_tokens": usage.prompt_tokens,
                "completion_tokens": usage.completion_tokens,
                "cache_read_tokens": usage.cache_read_tokens,
                "reasoning_tokens": usage.reasoning_tokens,
            },
        )


@dataclass
class Running:
    adapter: Any
    sink: AgentSink
    store: StateStore
    settings: Settings
    loop: LoopThread

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.adapter.port}"


def home_settings(
    root: Path,
    fake_llm: Any,
    gateway: dict[str, Any],
    env: dict[str, str] | None = None,
    extra: dict[str, Any] | None = None,
) -> Settings:
    config = merge(fake_model_config(fake_llm), {"gateway": {"platforms": gateway}})
    return make_home(root, merge(config, extra or {}), env)


@contextlib.contextmanager
def running_adapter(
    tmp_path: Path,
    fake_llm: Any,
    module: str,
    gateway: dict[str, Any],
    *,
    env: dict[str, str] | None = None,
    config: dict[str, Any] | None = None,
    **kw: Any,
) -> Iterator[Running]:
    """Serve ``herald.gateway.platforms.<module>`` built by its `create_adapter`
    (`config`: more top-level config, e.g. ``identities``)."""
    import importlib

    settings = home_settings(tmp_path / "home", fake_llm, gateway, env, config)
    workdir = tmp_path / "work"
    workdir.mkdir(exist_ok=True)
    store = StateStore(settings.home.state_db)
    sink = AgentSink(settings, store, workdir)
    factory = importlib.import_module(f"herald.gateway.platforms.{module}").create_adapter
    adapter = factory(
        settings.config, settings.secrets, home=settings.home, store=store, settings=settings, **kw
    )
    loop = LoopThread()
    try:
        loop.run(adapter.connect(sink))
        yield Running(adapter, sink, store, settings, loop)
    finally:
        try:
            loop.run(adapter.disconnect())
        finally:
            loop.close()
            store.close()
