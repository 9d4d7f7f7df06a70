"""`GatewayRunner`: the one pipeline every inbound message goes through.

authorize → route (profile, session key) → slash command? → busy? → find or create
the session → run the turn in the thread pool (the engine's hygiene policy first) →
deliver. Each step is a
small function (pipeline.py, auth.py, routing.py, session_keys.py, commands.py,
sessions.py, turns.py, delivery.py); this module only sequences them
and owns the per-session queues: turns of different sessions run in parallel, one
turn at a time per session.

Push platforms (``adapter.push_replies``) get every reply through `adapter.send`,
already split and recorded, and `dispatch` returns what was said; the adapter must
not send `DispatchResult.text` again. Request/response platforms take the reply from
the `DispatchResult`. `dispatch` returns when the message is answered, so an adapter
must dispatch each inbound message in its own task.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import herald.gateway.pipeline as pipeline
from herald.config.schema_identities import Identity
from herald.engine.commands import parse_command
from herald.gateway.agents import AgentCache
from herald.gateway.auth import Authorizer
from herald.gateway.commands import COMMANDS, HANDLERS
from herald.gateway.contracts import (
    DispatchResult,
    InboundVerdict,
    MessageEvent,
    OutgoingFile,
    PlatformAdapter,
    StreamCallbacks,
)
from herald.gateway.delivery import Deliverer, Target
from herald.gateway.files_out import chat_file_sender
from herald.gateway.identities import (
    APPROVAL_COMMANDS,
    command_refusal,
    identity_of,
    log_refusal,
    with_identity,
)
from herald.gateway.media import prepare_turn, speak_reply
from herald.gateway.outcomes import exception_sentence, turn_to_dispatch
from herald.gateway.pairing import PairingStore, pairing_path
from herald.gateway.routing import UnservedProfileError
from herald.gateway.sessions import AgentRequest, SessionManager
from herald.gateway.slots import SessionSlot
from herald.gateway.turns import ActiveTurn, TurnDriver, WorkItem, target_of
from herald.providers.voice import should_speak
from herald.safety import redact, register_secret_values
from herald.state.gateway_liveness import InboundLedger, InboundState, Outbox
from herald.state.gateway_tables import GatewayState, InflightTurn
from herald.toolbox import gateway_tools

if TYPE_CHECKING:
    from herald.config import Settings
    from herald.state import StateStore

log = logging.getLogger(__name__)

SettingsSource = Mapping[str, "Settings"] | Callable[[str], "Settings"]
StoreFactory = Callable[["Settings"], "StateStore"]
RECENT_EVENTS = 2048
SHUTDOWN_NOTE = "⏸ Herald is restarting; it will continue this when it is back."
RESTARTING = "Herald is restarting; send this again in a minute."
DEFAULT_ATTACHMENT_MB = 20.0  # for platforms without max_attachment_mb (Telegram's cap)


def default_store_factory(settings: Settings) -> StateStore:
    from herald.state import StateStore

    return StateStore(settings.home.state_db)


class GatewayRunner:
    """Implements `EventSink`. `settings` maps profile → Settings (or loads one by
    name, raising `UnservedProfileError` for a profile it will not serve); the gateway's
    own profile (`default_profile`) supplies the `gateway` config."""

    def __init__(
        self,
        settings: SettingsSource,
        adapters: Sequence[PlatformAdapter] = (),
        store_factory: StoreFactory = default_store_factory,
        *,
        executor: Executor | None = None,
        default_profile: str = "default",
        served: Sequence[str] | None = None,
    ):
        self._settings_source = settings
        self._settings: dict[str, Settings] = {}
        self.default_profile = default_profile
        own = self.settings_for(default_profile)
        self.settings = own
        self.config = own.config.gateway
        if served is not None:
            self.served = set(served) | {default_profile}
        elif isinstance(settings, Mapping):
            self.served = set(settings) | {default_profile}
        else:
            self.served = {default_profile}
        self.adapters: dict[str, PlatformAdapter] = {a.name: a for a in adapters}
        self._store_factory = store_factory
        self._stores: dict[str, StateStore] = {}
        self._own_executor = executor is None
        self.executor = executor or ThreadPoolExecutor(
            max_workers=self.config.max_concurrent_turns + 2, thread_name_prefix="herald-turn"
        )
        self.state = GatewayState(self.store_for(default_profile))
        # One id per process: an inbound event a dead process took but never started
        # is taken again by the next one (herald.state.gateway_liveness).
        self.boot = uuid.uuid4().hex
        self.inbound = InboundLedger(self.state.store, self.boot)
        self.outbox = Outbox(self.state.store)
        self.cache = AgentCache(
            max_agents=self.config.max_agents, idle_seconds=self.config.agent_idle_seconds
        )
        self.authorizer = Authorizer(
            self.config,
            PairingStore(pairing_path(own.home.root), ttl=self.config.pairing_code_ttl_seconds),
        )
        self.deliverer = Deliverer(
            self.state,
            timeout=self.config.send_timeout_seconds,
            retries=self.config.send_retries,
            outbox=self.outbox,
            backoff=self.config.watchdog.delivery_backoff,
            backoff_max=self.config.watchdog.delivery_backoff_max,
        )
        # The gateway's tools: one registry its agents share (each agent's own tools, its
        # MCP servers' and plugins', go on an overlay of it), and its cron jobs use.
        self.tools = gateway_tools()
        self.sessions = SessionManager(
            state=self.state,
            cache=self.cache,
            config=self.config,
            settings_for=self.settings_for,
            store_for=self.store_for,
            executor=self.executor,
            tools=self.tools,
        )
        self.turns = TurnDriver(
            config=self.config,
            deliverer=self.deliverer,
            executor=self.executor,
            approval_timeout=lambda agent: agent.config.approvals.timeout_seconds,
        )
        self._slots: dict[str, SessionSlot] = {}
        self._recent: OrderedDict[str, None] = OrderedDict()
        self.accepting = True
        self.draining = False
        # Set by the lifecycle to its watchdog's report (platform states, transitions),
        # for entrances that show it (the web dashboard).
        self.health_report: Callable[[], dict[str, Any]] | None = None

    # ---- profiles and stores --------------------------------------------------------------

    def settings_for(self, profile: str) -> Settings:
        found = self._settings.get(profile)
        if found is not None:
            return found
        source = self._settings_source
        if isinstance(source, Mapping):
            if profile not in source:
                raise UnservedProfileError(profile, source)
            found = source[profile]
        else:
            found = source(profile)
        register_secret_values(found.secrets.secret_values())  # masked in every chat
        self._settings[profile] = found
        return found

    def store_for(self, profile: str) -> StateStore:
        store = self._stores.get(profile)
        if store is None:
            store = self._stores[profile] = self._store_factory(self.settings_for(profile))
        return store

    # ---- the pipeline ---------------------------------------------------------------------

    def record_inbound(self, platform: str, event_id: str) -> InboundVerdict:
        """`EventSink.record_inbound`: durable, before the adapter acknowledges."""
        verdict = self.inbound.record(platform, event_id)
        if verdict == "seen":
            log.info("%s event %s was already taken; dropping the replay", platform, event_id)
        return verdict

    def _settle_inbound(self, event: MessageEvent, state: InboundState) -> None:
        if event.event_id is None:
            return
        try:
            self.inbound.mark(event.platform, event.event_id, state)
        except Exception as exc:  # the store is closing: the row stays as it was
            log.warning(
                "could not mark %s event %s %s: %s", event.platform, event.event_id, state, exc
            )

    async def dispatch(
        self,
        event: MessageEvent,
        adapter: PlatformAdapter,
        *,
        stream: StreamCallbacks | None = None,
    ) -> DispatchResult:
        result = await self._dispatch(event, adapter, stream=stream)
        if result.status not in ("queued", "interrupted"):  # those finish in _work
            self._settle_inbound(event, "done")
        return result

    async def _dispatch(
        self,
        event: MessageEvent,
        adapter: PlatformAdapter,
        *,
        stream: StreamCallbacks | None = None,
    ) -> DispatchResult:
        self.adapters.setdefault(adapter.name, adapter)
        if not self.accepting and not pipeline.answers_running_turn(event):
            return await self._say(adapter, event, DispatchResult("error", RESTARTING))
        auth = self.authorizer.check(event)
        if auth.status == "ignored":
            return DispatchResult("ignored")
        if auth.status == "pairing":
            return await self._say(adapter, event, DispatchResult("pairing", auth.text))
        # Every turn has an identity (invariant 19): resolved once, carried on the event.
        event = with_identity(event, self.identity_of(event))
        if self.state.is_dead(event.platform, event.chat_id) and self.state.revive(
            event.platform, event.chat_id
        ):
            log.info(
                "%s chat %s wrote again; delivering to it again", event.platform, event.chat_id
            )
        try:
            profile, key = pipeline.route(event, self.config, self.default_profile, self.served)
        except UnservedProfileError as exc:
            log.warning("%s", exc)
            return await self._say(adapter, event, DispatchResult("error", f"⚠️ {exc}."))
        await self._emit(
            profile,
            "on_message_received",
            platform=event.platform,
            chat_id=event.chat_id,
            user_id=event.user_id,
            text=event.text,
        )
        reply_key = pipeline.reply_key(event)
        if self._seen(reply_key):
            log.info("ignoring a repeated delivery of %s", reply_key)
            return DispatchResult("ignored")
        slot = self.slot(key, profile)
        item = WorkItem(
            event, adapter, "", reply_key, asyncio.get_running_loop().create_future(), stream
        )
        if not event.is_command and slot.prompts.pending_kind == "clarify":
            slot.prompts.answer_clarify(event.text)
            return DispatchResult("command", "")
        parsed = parse_command(event.text)
        if parsed is not None:
            return await self._command(slot, item, *parsed)
        refusal = await self._prepare(item, profile)
        if refusal is not None:
            return await self._say(adapter, event, refusal, item.key)
        if not item.text:
            return DispatchResult("ignored")
        if slot.busy:
            return await self._when_busy(slot, item)
        self.enqueue(slot, item)
        return await item.future

    async def _prepare(self, item: WorkItem, profile: str) -> DispatchResult | None:
        """The message's text, photos and voice note (herald.gateway.media). The
        transcript and anything that could not be used are said in the chat first; a
        message left with nothing to answer gets that as its reply."""
        event = item.event
        if not event.files:
            item.text = pipeline.compose_turn_text(event)
            return None
        settings = self.settings_for(profile)
        section = getattr(self.config.platforms, event.platform, None)
        limit_mb = float(getattr(section, "max_attachment_mb", DEFAULT_ATTACHMENT_MB))
        loop = asyncio.get_running_loop()
        prepared = await prepare_turn(
            event,
            folder=Path(self.config.cwd or os.getcwd()) / "attachments",
            max_bytes=int(limit_mb * 1024 * 1024),
            config=settings.config,
            secrets=settings.secrets,
            run_blocking=lambda fn: loop.run_in_executor(self.executor, fn),
        )
        item.text, item.images = prepared.text, prepared.images
        item.heard_voice = prepared.heard_voice
        said = [f"🎤 {prepared.transcript}"] if prepared.transcript else []
        said += prepared.problems
        if not prepared.answerable:
            return DispatchResult("error", "\n".join(said) or "Nothing in that message to answer.")
        if said and item.adapter.push_replies:
            await self.deliverer.deliver(
                item.adapter, target_of(event), "\n".join(said), key=f"{item.key}:heard"
            )
        return None

    async def _speak(self, item: WorkItem, profile: str, text: str) -> None:
        """Speak the reply back as `voice.reply` says (auto: when a voice note asked)."""
        config = self.settings_for(profile).config
        if not (text and item.adapter.push_replies):
            return
        if not should_speak(config, heard_voice=item.heard_voice):
            return
        loop = asyncio.get_running_loop()
        target = target_of(item.event)

        async def send(file: OutgoingFile) -> str | None:
            report = await self.deliverer.deliver_file(
                item.adapter, target, file, key=f"{item.key}:spoken"
            )
            return None if report.ok else (report.error or "the platform refused it")

        problem = await speak_reply(
            item.adapter,
            text,
            config=config,
            secrets=self.settings_for(profile).secrets,
            run_blocking=lambda fn: loop.run_in_executor(self.executor, fn),
            send=send,
        )
        if problem is not None:
            await self.deliverer.deliver(item.adapter, target, problem, key=f"{item.key}:unspoken")

    def _seen(self, reply_key: str) -> bool:
        if not pipeline.is_stable_key(reply_key):
            return False
        if reply_key in self._recent or self.state.has_delivery(reply_key):
            return True
        self._recent[reply_key] = None
        while len(self._recent) > RECENT_EVENTS:
            self._recent.popitem(last=False)
        return False

    def slot(self, key: str, profile: str) -> SessionSlot:
        slot = self._slots.get(key)
        if slot is None:
            slot = self._slots[key] = SessionSlot(key, profile)
        return slot

    def _asking_slot(self, slot: SessionSlot, event: MessageEvent) -> SessionSlot:
        """Where an approver's answer goes: their own session if it is waiting, else the
        one session of this chat that is (a member's turn in a group with per-member
        sessions asks there, and only an approver can answer it)."""
        if slot.prompts.pending_kind == "approval":
            return slot
        waiting = [
            other
            for other in self._slots.values()
            if other.prompts.pending_kind == "approval"
            and other.turn is not None
            and other.turn.item.event.platform == event.platform
            and other.turn.item.event.chat_id == event.chat_id
        ]
        return waiting[0] if len(waiting) == 1 else slot

    def identity_of(self, event: MessageEvent) -> Identity:
        return identity_of(event, self.settings_for(self.default_profile).config)

    async def _command(
        self, slot: SessionSlot, item: WorkItem, name: str, arg: str
    ) -> DispatchResult:
        identity = self.identity_of(item.event)
        refusal = command_refusal(identity, name, arg)
        if refusal is not None:
            log_refusal(identity, item.event, name)
            return await self._say(
                item.adapter, item.event, DispatchResult("command", refusal), item.key
            )
        if name in APPROVAL_COMMANDS:
            slot = self._asking_slot(slot, item.event)
        spec = COMMANDS.get(name)
        if spec is None:
            text = await self._plugin_command(slot, name, arg)
            if text is not None:
                return await self._say(
                    item.adapter, item.event, DispatchResult("command", text), item.key
                )
            text = f"Unknown command /{name}; /help lists the commands."
            return await self._say(
                item.adapter, item.event, DispatchResult("command", text), item.key
            )
        if not spec.while_busy:
            if slot.busy:
                text = f"/{name} cannot run during a turn; /stop it first."
                return await self._say(
                    item.adapter, item.event, DispatchResult("command", text), item.key
                )
            item.kind, item.command = "command", (name, arg)
            self.enqueue(slot, item)
            return await item.future
        text = await HANDLERS[name](self, slot, item, arg)
        return await self._say(item.adapter, item.event, DispatchResult("command", text), item.key)

    def plugins_for(self, profile: str) -> Any:
        """The plugin set of a served profile (loaded on first use)."""
        from herald.plugins import plugins_for

        settings = self.settings_for(profile)
        return plugins_for(
            settings.config,
            settings.home,
            settings.secrets,
            cwd=settings.config.gateway.cwd or os.getcwd(),
        )

    async def _plugin_command(self, slot: SessionSlot, name: str, arg: str) -> str | None:
        """A plugin's ``/name`` answered off the event loop; None if no plugin has it."""
        from herald.plugins.slash import answer_slash_command

        plugins = self.plugins_for(slot.profile)
        if name not in plugins.slash_commands:
            return None
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            self.executor,
            lambda: answer_slash_command(
                plugins, name, arg, session_id=self.sessions.session_id(slot.key), surface="gateway"
            ),
        )

    async def _when_busy(self, slot: SessionSlot, item: WorkItem) -> DispatchResult:
        turn = slot.turn
        phase = turn.phase if turn is not None and turn.item.kind != "command" else None
        # Photos ride on a turn of their own: a steer carries text only.
        mode = "queue" if item.images else self.config.busy_mode
        action = pipeline.busy_action(mode, phase, push=item.adapter.push_replies)
        if action == "steer" and turn is not None and turn.steer(item.text):
            turn.steered.append(item)
            result = DispatchResult("steered", "↪ Passed to the running turn.")
        elif action == "interrupt" and turn is not None:
            self.enqueue(slot, item, front=True)
            turn.stop("busy")
            result = DispatchResult(
                "interrupted", "⏹ Interrupted the running turn; answering this next."
            )
        else:
            self.enqueue(slot, item)
            result = DispatchResult("queued", "⏳ Queued; it runs when the current turn ends.")
        if not item.adapter.push_replies and result.status != "steered":
            return await item.future  # a request/response caller waits for its own answer
        return await self._say(item.adapter, item.event, result)

    # ---- the per-session queue ------------------------------------------------------------

    def enqueue(self, slot: SessionSlot, item: WorkItem, *, front: bool = False) -> None:
        if front:
            slot.queue.appendleft(item)
        else:
            slot.queue.append(item)
        if slot.worker is None:
            slot.worker = asyncio.ensure_future(self._work(slot))

    def derive_item(self, item: WorkItem, text: str, kind: str = "message") -> WorkItem:
        """A new work item answering in the same place as `item` (its own ledger key)."""
        future = asyncio.get_running_loop().create_future()
        key = f"{item.key}:{kind}:{uuid.uuid4().hex[:12]}"
        return WorkItem(item.event, item.adapter, text, key, future, item.stream, kind)  # type: ignore[arg-type]

    def drop_queued(self, slot: SessionSlot, why: str) -> int:
        dropped = 0
        while slot.queue:
            item = slot.queue.popleft()
            if not item.future.done():
                item.future.set_result(DispatchResult("error", why))
            dropped += 1
        return dropped

    async def _work(self, slot: SessionSlot) -> None:
        try:
            while slot.queue:
                if self.draining:
                    await self._reject_queued(slot)
                    break
                item = slot.queue.popleft()
                result = await self._process(slot, item)
                self._settle_inbound(item.event, "done")
                if not item.future.done():
                    item.future.set_result(result)
        finally:
            slot.worker = None
            if not slot.queue and self._slots.get(slot.key) is slot:
                del self._slots[slot.key]

    async def _reject_queued(self, slot: SessionSlot) -> None:
        while slot.queue:
            item = slot.queue.popleft()
            result = await self._say(item.adapter, item.event, DispatchResult("error", RESTARTING))
            if not item.future.done():
                item.future.set_result(result)

    async def _process(self, slot: SessionSlot, item: WorkItem) -> DispatchResult:
        active = ActiveTurn(item)
        slot.turn = active
        try:
            if item.kind == "command":
                assert item.command is not None
                active.phase = "command"
                name, arg = item.command
                text = await HANDLERS[name](self, slot, item, arg)
                return await self._say(
                    item.adapter, item.event, DispatchResult("command", text), item.key
                )
            return await self._run_turn(slot, item, active)
        except Exception as exc:  # a broken agent or store: tell the chat, keep serving
            log.exception("handling a message for %s failed", slot.key)
            return await self._say(
                item.adapter, item.event, DispatchResult("error", exception_sentence(exc)), item.key
            )
        finally:
            slot.turn = None

    async def _run_turn(
        self, slot: SessionSlot, item: WorkItem, active: ActiveTurn
    ) -> DispatchResult:
        raw = item.event.raw if isinstance(item.event.raw, dict) else {}
        event = item.event
        origin = ":".join(str(p) for p in (event.platform, event.chat_id, event.thread_id) if p)
        request = AgentRequest(
            slot.key,
            slot.profile,
            event.platform,
            item.text,
            raw.get("caller_system"),
            origin,
            self.identity_of(item.event),
            chat_file_sender(
                self.deliverer,
                item.adapter,
                target_of(event),
                shared=event.chat_type != "private",
                max_bytes=self.config.send_file.max_bytes(event.platform),
            ),
        )
        active.agent = await self.sessions.acquire(request)
        try:
            self.state.mark_inflight(
                pipeline.inflight_record(slot.key, slot.profile, active.agent.session_id, item)
            )
            self._settle_inbound(item.event, "started")  # a restart resumes it from here
            result = await self.turns.run(active, slot.prompts)
        except BaseException:
            self.state.clear_inflight(slot.key)  # a turn that failed outright is not resumed
            raise
        finally:
            self.sessions.release(slot.key)
        cut_by_shutdown = active.stop_reason == "shutdown" and not result.completed
        if not cut_by_shutdown:  # else the mark stays: the next start resumes the turn
            self.state.clear_inflight(slot.key)
        note = SHUTDOWN_NOTE if cut_by_shutdown else None
        outcome = turn_to_dispatch(result, interrupted_note=note)
        # The turn's steer queue closed when it ended: what it had not delivered comes
        # back here once, and a later steer was refused and sent as a message instead.
        leftover = result.leftover_steer
        if leftover:
            origin = active.steered[-1] if active.steered else item
            self.enqueue(slot, self.derive_item(origin, leftover, "steer"), front=True)
        said = await self._say(item.adapter, item.event, outcome, item.key)
        if said.status == "replied":
            await self._speak(item, slot.profile, said.text)
        return said

    async def _say(
        self,
        adapter: PlatformAdapter,
        event: MessageEvent,
        result: DispatchResult,
        key: str | None = None,
    ) -> DispatchResult:
        """Push `result.text` to the chat where the platform takes pushed replies; the
        text handed back is redacted too."""
        result.text = redact(result.text)
        if adapter.push_replies and result.text:
            await self.deliverer.deliver(adapter, target_of(event), result.text, key=key)
        if result.text:
            await self._emit(
                self.default_profile,
                "on_message_sent",
                platform=event.platform,
                chat_id=event.chat_id,
                text=result.text,
            )
        return result

    async def _emit(self, profile: str, hook: str, **payload: Any) -> None:
        """A gateway hook of the profile's plugins, run off the event loop."""
        hooks = self.plugins_for(profile).hooks
        if hooks:
            loop = asyncio.get_running_loop()
            await loop.run_in_executor(self.executor, lambda: hooks.emit(hook, **payload))

    # ---- for adapters and the lifecycle ---------------------------------------------------

    async def deliver_text(
        self,
        platform: str,
        chat_id: str,
        text: str,
        *,
        thread_id: str | None = None,
        key: str | None = None,
    ) -> bool:
        """Send `text` to a chat of a connected push platform (webhook `deliver_to`,
        notices); split, redacted and recorded like any reply. False if it did not land."""
        adapter = self.adapters.get(platform)
        if adapter is None or not adapter.push_replies:
            log.warning(
                "cannot deliver to %s:%s: no such push platform is connected", platform, chat_id
            )
            return False
        report = await self.deliverer.deliver(
            adapter, Target(platform, chat_id, thread_id), text, key=key
        )
        return report.ok

    def bind_session(self, event: MessageEvent, session_id: str) -> None:
        """Answer `event` (and later ones with the same session key) in the stored
        session `session_id`."""
        profile, key = pipeline.route(event, self.config, self.default_profile, self.served)
        self.sessions.bind(key, profile, session_id)

    @property
    def running_turns(self) -> int:
        return sum(1 for slot in self._slots.values() if slot.turn is not None)

    def busy_slots(self) -> list[SessionSlot]:
        return [slot for slot in self._slots.values() if slot.busy]

    def inflight(self) -> list[InflightTurn]:
        return self.state.inflight_turns()

    async def shutdown(
        self, drain_seconds: float, *, grace: float = 15.0, force: asyncio.Event | None = None
    ) -> None:
        """`drain`, then `close`."""
        await self.drain(drain_seconds, grace=grace, force=force)
        self.close()

    async def drain(
        self, drain_seconds: float, *, grace: float = 15.0, force: asyncio.Event | None = None
    ) -> None:
        """Stop accepting; let running turns finish for `drain_seconds` (or until `force`
        is set), then interrupt them (their sessions are resumed on the next start).
        Answers to a running turn's questions are still taken meanwhile."""
        self.accepting = False
        self.draining = True
        deadline = time.monotonic() + drain_seconds
        while self.busy_slots() and time.monotonic() < deadline:
            if force is not None and force.is_set():
                break
            await asyncio.sleep(0.05)
        busy = self.busy_slots()
        if busy:
            log.info("interrupting %d running turn(s) for shutdown", len(busy))
        for slot in busy:
            if slot.turn is not None:
                slot.turn.stop("shutdown")
        workers = [slot.worker for slot in busy if slot.worker is not None]
        if workers:
            _done, pending = await asyncio.wait(workers, timeout=grace)
            if pending:
                log.warning(
                    "%d turn(s) did not stop in time; their sessions stay marked in flight",
                    len(pending),
                )

    def close(self) -> None:
        self.cache.close_all()
        if self._own_executor and isinstance(self.executor, ThreadPoolExecutor):
            self.executor.shutdown(wait=False, cancel_futures=True)
        for store in self._stores.values():
            try:
                store.close()
            except Exception as exc:
                log.warning("closing a state store failed: %s", exc)
        self._stores.clear()


__all__ = ["GatewayRunner", "SessionSlot", "default_store_factory"]
