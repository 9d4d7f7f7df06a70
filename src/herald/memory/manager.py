"""`MemoryManager`: the built-in memory plus at most one external provider.

The engine talks to memory only through this object:

- session start: `system_prompt_blocks()` (built-in snapshot + provider block);
- each turn: `begin_turn(text)` resets the per-turn failure cap, calls the
  provider's `on_turn_start` and returns `prefetch(text)`; `api_content_for`
  turns the recall into the user message's API copy;
- after the reply: `sync_turn(user, assistant)` (background thread);
- compression: `on_pre_compress(messages)`; session end: `on_session_end`;
  exit: `shutdown()`.

Prefetch runs the provider in a thread with a timeout, so a slow store costs a
turn at most `prefetch_timeout_seconds`; while a previous prefetch thread is
still running the next one is skipped rather than piling threads up. Every
provider failure is logged and treated as "nothing recalled": memory never
breaks a turn.
"""

from __future__ import annotations

import importlib
import inspect
import logging
import queue
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from herald.config import HeraldConfig, HeraldHome
from herald.config.schema_identities import OWNER
from herald.memory.builtin import BuiltinMemory
from herald.memory.provider import MemoryProvider
from herald.memory.recall import (
    Recall,
    api_content_for,
    clip,
    count_items,
    fence,
    is_trivial,
    query_for,
)
from herald.memory.snapshot import memory_blocks

if TYPE_CHECKING:
    from herald.config import Secrets
    from herald.tools.registry import ToolContext, ToolRegistry

log = logging.getLogger(__name__)

PROVIDERS = {"holographic": ("herald.memory.holographic", "HolographicProvider")}
SHUTDOWN_TIMEOUT = 10.0


class MemoryProviderError(RuntimeError):
    """A provider that cannot be used: a second one, or one that failed to load."""


class MemoryManager:
    def __init__(
        self,
        home: HeraldHome,
        config: HeraldConfig | None = None,
        secrets: Secrets | None = None,
        provider: MemoryProvider | None = None,
        identity: str = "owner",
    ) -> None:
        """`provider` is added when given; otherwise `config.memory.provider` (if set)
        is loaded. Raises MemoryProviderError when the provider cannot start. `identity`:
        whose memory this is (their USER.md, their recalled facts)."""
        self.home = home
        self.config = config or HeraldConfig()
        self.secrets = secrets
        self.identity = identity
        self.builtin = BuiltinMemory(home, self.config.memory, identity=identity)
        self.builtin.add_listener(self.on_memory_write)
        self.provider: MemoryProvider | None = None
        self._prefetch_lock = threading.Lock()
        self._prefetch_thread: threading.Thread | None = None
        self._sync = _SyncWorker()
        self.skipped_prefetches = 0
        chosen = provider if provider is not None else load_configured_provider(self.config)
        if chosen is not None:
            self.add_provider(chosen)

    # -- providers ----------------------------------------------------------------

    def add_provider(self, provider: MemoryProvider) -> None:
        """Initialize and attach the external provider. Only one may be active."""
        if self.provider is not None:
            raise MemoryProviderError(
                f"memory provider {_name(provider)!r} refused: {_name(self.provider)!r} is "
                "already active and Herald runs at most one external memory provider. "
                "Set memory.provider to the one you want."
            )
        extra: dict[str, Any] = {}
        if self.identity != OWNER:
            # A provider that cannot keep this identity's memory apart from the owner's
            # would recall the owner's facts into their turns (or learn theirs as the
            # owner's): it is off for them rather than shared.
            if "identity" not in inspect.signature(provider.initialize).parameters:
                raise MemoryProviderError(
                    f"memory provider {_name(provider)!r} keeps one memory for everyone (its "
                    f"initialize takes no identity), so it is off for {self.identity}'s turns"
                )
            extra["identity"] = self.identity
        try:
            provider.initialize(home=self.home, config=self.config, secrets=self.secrets, **extra)
        except Exception as exc:
            raise MemoryProviderError(
                f"memory provider {_name(provider)!r} failed to start: {type(exc).__name__}: {exc}"
            ) from exc
        self.provider = provider

    # -- session start -----------------------------------------------------------------

    def system_prompt_blocks(self) -> list[str]:
        """The built-in snapshot (taken now, for a new session's prompt) and the
        provider's static block."""
        blocks = memory_blocks(self.builtin)
        if self.provider is not None:
            text = self._call("system_prompt_block", default="")
            if isinstance(text, str) and text.strip():
                blocks.append(text.strip())
        return blocks

    def attach(self, ctx: ToolContext) -> None:
        """Let the `memory` tool (and provider tools) of this agent use this manager,
        so tool writes share the snapshot's clobber guard and reach the provider."""
        ctx.memory = self

    # -- each turn -----------------------------------------------------------------------

    is_trivial = staticmethod(is_trivial)
    query_for = staticmethod(query_for)
    fence = staticmethod(fence)
    api_content_for = staticmethod(api_content_for)

    def begin_turn(self, text: str, timeout: float | None = None) -> Recall | None:
        """Start of a turn: reset the memory tool's failure cap, tell the provider,
        and recall for `text`."""
        self.builtin.reset_failures()
        if self.provider is not None and hasattr(self.provider, "on_turn_start"):
            self._call("on_turn_start", text)
        return self.prefetch(text, timeout)

    def prefetch(self, text: str, timeout: float | None = None) -> Recall | None:
        """What the provider recalls for the user's message, or None (no provider,
        trivial message, timeout, a previous prefetch still running, or an error)."""
        if self.provider is None or is_trivial(text):
            return None
        query = query_for(text)
        wait = self.config.memory.prefetch_timeout_seconds if timeout is None else timeout
        box: dict[str, Any] = {}
        with self._prefetch_lock:
            running = self._prefetch_thread
            if running is not None and running.is_alive():
                self.skipped_prefetches += 1
                log.info("memory recall skipped: the previous recall is still running")
                return None
            thread = threading.Thread(
                target=self._run_prefetch,
                args=(self.provider, query, box),
                name="herald-memory-prefetch",
                daemon=True,
            )
            self._prefetch_thread = thread
            thread.start()
        thread.join(max(0.0, wait))
        if thread.is_alive():
            log.warning("memory recall took longer than %.1fs; going on without it", wait)
            return None
        recalled = box.get("text")
        if not isinstance(recalled, str) or not recalled.strip():
            return None
        recalled = clip(recalled, self.config.memory.prefetch_max_chars)
        return Recall(text=recalled, count=count_items(recalled))

    @staticmethod
    def _run_prefetch(provider: MemoryProvider, query: str, box: dict[str, Any]) -> None:
        try:
            box["text"] = provider.prefetch(query)
        except Exception:
            log.warning("memory provider %r failed to recall", _name(provider), exc_info=True)

    def sync_turn(self, user: str, assistant: str) -> None:
        """Hand one finished exchange to the provider, in the background (in order)."""
        provider = self.provider
        if provider is None:
            return
        self._sync.submit(lambda: provider.sync_turn(user, assistant), _name(provider))

    def wait_for_sync(self, timeout: float = SHUTDOWN_TIMEOUT) -> bool:
        """Block until queued syncs ran (True) or `timeout` passed (False)."""
        return self._sync.drain(timeout)

    # -- hooks ---------------------------------------------------------------------------

    def on_memory_write(self, target: str, action: str, content: str) -> None:
        """Mirror a built-in memory write to the provider (called after the write)."""
        if self.provider is not None and hasattr(self.provider, "on_memory_write"):
            self._call("on_memory_write", target, action, content)

    def on_pre_compress(self, messages: list[dict[str, Any]]) -> str:
        """Text the provider wants kept through a compression ('' = none)."""
        if self.provider is None or not hasattr(self.provider, "on_pre_compress"):
            return ""
        text = self._call("on_pre_compress", messages, default="")
        return text if isinstance(text, str) else ""

    def on_session_end(self, session_id: str) -> None:
        if self.provider is not None and hasattr(self.provider, "on_session_end"):
            self._call("on_session_end", session_id)

    def backup_paths(self) -> list[Path]:
        """Files a backup of this home's memory must include."""
        paths = [self.builtin.files.path("memory"), self.builtin.files.path("user")]
        if self.provider is not None and hasattr(self.provider, "backup_paths"):
            extra = self._call("backup_paths", default=[])
            paths.extend(Path(p) for p in extra or [])
        return paths

    # -- provider tools --------------------------------------------------------------------

    def tool_schemas(self) -> list[dict[str, Any]]:
        if self.provider is None:
            return []
        schemas = self._call("tool_schemas", default=[])
        return [s for s in schemas or [] if isinstance(s, dict) and s.get("name")]

    def handle_tool_call(self, name: str, arguments: dict[str, Any]) -> str:
        if self.provider is None:
            raise MemoryProviderError(f"no memory provider is active to run {name!r}")
        return self.provider.handle_tool_call(name, arguments)

    def register_provider_tools(self, target: ToolRegistry, toolset: str = "core") -> list[str]:
        """Register the provider's tools; each call is routed to the manager attached
        to the calling agent's ToolContext (see `attach`)."""
        names: list[str] = []
        for schema in self.tool_schemas():
            name = str(schema["name"])
            target.register(name, toolset, schema, _provider_tool_handler(name))
            names.append(name)
        return names

    # -- shutdown --------------------------------------------------------------------------

    def shutdown(self, timeout: float = SHUTDOWN_TIMEOUT) -> None:
        """Let queued syncs finish (up to `timeout`), then close the provider."""
        self._sync.close(timeout)
        if self.provider is not None:
            self._call("shutdown")

    def _call(self, hook: str, *args: Any, default: Any = None) -> Any:
        provider = self.provider
        try:
            return getattr(provider, hook)(*args)
        except Exception:
            log.warning("memory provider %r: %s failed", _name(provider), hook, exc_info=True)
            return default


def load_configured_provider(config: HeraldConfig) -> MemoryProvider | None:
    """The provider `memory.provider` names, imported lazily (None when unset)."""
    name = config.memory.provider
    if name is None:
        return None
    if name not in PROVIDERS:
        raise MemoryProviderError(
            f"memory.provider is {name!r}, which is neither built in ({', '.join(PROVIDERS)}) "
            "nor registered by an enabled plugin; enable the plugin (plugins.enabled) or "
            "unset memory.provider"
        )
    module_name, class_name = PROVIDERS[name]
    try:
        module = importlib.import_module(module_name)
        provider_class = getattr(module, class_name)
    except (ImportError, AttributeError) as exc:
        raise MemoryProviderError(
            f"memory.provider is {name!r} but {module_name}.{class_name} cannot be loaded "
            f"({type(exc).__name__}: {exc}); unset memory.provider or reinstall Herald"
        ) from exc
    provider = provider_class()
    if not isinstance(provider, MemoryProvider):
        raise MemoryProviderError(f"{module_name}.{class_name} is not a MemoryProvider")
    return provider


def _name(provider: MemoryProvider | None) -> str:
    if provider is None:
        return "none"
    return getattr(provider, "name", "") or type(provider).__name__


def _provider_tool_handler(name: str) -> Callable[[dict[str, Any], ToolContext], str]:
    def handle(args: dict[str, Any], ctx: ToolContext) -> str:
        manager = ctx.memory
        if not isinstance(manager, MemoryManager) or manager.provider is None:
            raise MemoryProviderError(f"{name} needs an active memory provider in this session")
        return manager.handle_tool_call(name, args)

    return handle


class _SyncWorker:
    """One daemon thread running provider syncs in order."""

    def __init__(self) -> None:
        self._queue: queue.Queue[tuple[Callable[[], object], str] | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._closed = False

    def submit(self, job: Callable[[], object], label: str) -> None:
        with self._lock:
            if self._closed:
                log.warning("memory sync after shutdown dropped (%s)", label)
                return
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="herald-memory-sync", daemon=True
                )
                self._thread.start()
            self._queue.put((job, label))

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            try:
                if item is None:
                    return
                job, label = item
                try:
                    job()
                except Exception:
                    log.warning("memory provider %r failed to sync a turn", label, exc_info=True)
            finally:
                self._queue.task_done()

    def drain(self, timeout: float) -> bool:
        done = threading.Event()

        def wait() -> None:
            self._queue.join()
            done.set()

        threading.Thread(target=wait, daemon=True).start()
        return done.wait(timeout)

    def close(self, timeout: float) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            thread = self._thread
            if thread is None:
                return
            self._queue.put(None)
        thread.join(timeout)
        if thread.is_alive():
            log.warning("memory sync still running after %.0fs; not waiting longer", timeout)
