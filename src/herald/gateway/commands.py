"""The gateway's slash commands: the shared registry's `gateway` commands, handled here.

Commands allowed during a turn (`/stop`, `/steer`, `/usage`, `/agents`, `/approve`, `/deny`,
`/help`) run at once. The others (`/new`, `/compress`, `/model`) touch the agent, so
they run through the session's queue like a message (`/rollback` too: a restore must
never race a turn's writes): one thing at a time per
session. The registry decides what exists and what may run while busy.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from concurrent.futures import Executor
from typing import TYPE_CHECKING, Any, Protocol

from herald.engine.commands import commands_for, help_lines
from herald.gateway.approvals import CHOICE_COMMANDS

if TYPE_CHECKING:
    from herald.config import Settings
    from herald.config.schema_identities import Identity
    from herald.gateway.contracts import MessageEvent
    from herald.gateway.sessions import SessionManager
    from herald.gateway.slots import SessionSlot
    from herald.gateway.turns import WorkItem
    from herald.state import StateStore

log = logging.getLogger(__name__)


class CommandRunner(Protocol):
    """What the commands use of the runner (`GatewayRunner` is the one there is); named
    here so this module, which the runner imports, does not import the runner back."""

    sessions: SessionManager
    executor: Executor

    def settings_for(self, profile: str) -> Settings: ...

    def identity_of(self, event: MessageEvent) -> Identity: ...

    def store_for(self, profile: str) -> StateStore: ...

    def plugins_for(self, profile: str) -> Any: ...

    def enqueue(self, slot: SessionSlot, item: WorkItem, *, front: bool = False) -> None: ...

    def derive_item(self, item: WorkItem, text: str, kind: str = "message") -> WorkItem: ...

    def drop_queued(self, slot: SessionSlot, why: str) -> int: ...


Handler = Callable[["CommandRunner", "SessionSlot", "WorkItem", str], Awaitable[str]]
COMMANDS = {c.name: c for c in commands_for("gateway")}


async def cmd_help(runner: CommandRunner, slot: SessionSlot, item: WorkItem, arg: str) -> str:
    from herald.plugins.slash import slash_help_lines

    extra = slash_help_lines(runner.plugins_for(slot.profile))
    return "Commands:\n" + "\n".join(help_lines("gateway") + extra)


async def cmd_stop(runner: CommandRunner, slot: SessionSlot, item: WorkItem, arg: str) -> str:
    dropped = runner.drop_queued(slot, "stopped with /stop before it ran")
    turn = slot.turn
    if turn is None or turn.item.kind == "command":
        return "Nothing is running." + (f" Dropped {dropped} queued message(s)." if dropped else "")
    turn.stop("user")
    extra = f" Dropped {dropped} queued message(s)." if dropped else ""
    return "⏹ Stopping the running turn." + extra


async def cmd_steer(runner: CommandRunner, slot: SessionSlot, item: WorkItem, arg: str) -> str:
    if not arg:
        return "Usage: /steer TEXT"
    turn = slot.turn
    if turn is not None and turn.item.kind != "command" and turn.steer(arg):
        turn.steered.append(item)
        return "↪ Passed to the running turn; the model sees it after the current step."
    derived = runner.derive_item(item, arg)
    runner.enqueue(slot, derived)
    if not item.adapter.push_replies:  # the caller waits for the answer itself
        return (await derived.future).text
    return "Nothing is running; sending it as a message."


async def cmd_usage(runner: CommandRunner, slot: SessionSlot, item: WorkItem, arg: str) -> str:
    session_id = runner.sessions.session_id(slot.key)
    record = runner.store_for(slot.profile).get_session(session_id) if session_id else None
    if record is None:
        return "No messages in this session yet."
    from herald.state.reports import local_day_start, session_usage

    report = runner.store_for(slot.profile).report(
        session_usage, record.id, today=local_day_start()
    )
    return "\n".join([f"Session {record.id} ({record.provider}:{record.model})", *report.lines()])


async def cmd_agents(runner: CommandRunner, slot: SessionSlot, item: WorkItem, arg: str) -> str:
    from herald.delegation import agents_command

    return agents_command(runner.sessions.session_id(slot.key), arg)


async def cmd_kanban(runner: CommandRunner, slot: SessionSlot, item: WorkItem, arg: str) -> str:
    from herald.kanban.chat import kanban_command

    settings = runner.settings_for(slot.profile)
    return await asyncio.to_thread(kanban_command, settings, arg)  # the board may be remote


def _approval_choice(arg: str) -> str | None:
    word = arg.strip().lower()
    return {"": "once", "once": "once", "session": "session", "always": "always"}.get(word)


async def cmd_approve(runner: CommandRunner, slot: SessionSlot, item: WorkItem, arg: str) -> str:
    choice = _approval_choice(arg)
    if choice is None:
        return "Usage: " + ", ".join(v for k, v in CHOICE_COMMANDS.items() if k != "deny")
    return slot.prompts.answer_approval(choice)


async def cmd_deny(runner: CommandRunner, slot: SessionSlot, item: WorkItem, arg: str) -> str:
    return slot.prompts.answer_approval("deny")


# ---- commands that run through the session queue ------------------------------------------


async def cmd_new(runner: CommandRunner, slot: SessionSlot, item: WorkItem, arg: str) -> str:
    old = runner.sessions.reset(slot.key)
    return "🆕 Started a new session." + (f" (The previous one was {old}.)" if old else "")


async def _with_agent(
    runner: CommandRunner, slot: SessionSlot, item: WorkItem, work: Callable[[Any], str]
) -> str:
    from herald.gateway.sessions import AgentRequest

    agent = await runner.sessions.acquire(
        AgentRequest(
            slot.key, slot.profile, item.event.platform, "", identity=runner.identity_of(item.event)
        )
    )
    try:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(runner.executor, work, agent)
    finally:
        runner.sessions.release(slot.key)


async def cmd_compress(runner: CommandRunner, slot: SessionSlot, item: WorkItem, arg: str) -> str:
    if runner.sessions.session_id(slot.key) is None:
        return "Nothing to compress yet."

    def work(agent: Any) -> str:
        from herald.engine import TurnCallbacks

        notes: list[str] = []  # this command's notices only: nothing stays on the agent
        if not agent.compress_now(
            focus=arg or None, callbacks=TurnCallbacks(on_status=notes.append)
        ):
            return "Nothing to compress: the conversation is already short."
        return "\n".join(notes) or "Compressed the conversation."

    return await _with_agent(runner, slot, item, work)


async def cmd_model(runner: CommandRunner, slot: SessionSlot, item: WorkItem, arg: str) -> str:
    settings = runner.settings_for(slot.profile)
    if not arg:
        if runner.sessions.session_id(slot.key) is None:
            return f"{settings.config.model.provider or 'auto'}:{settings.config.model.name}"
        return await _with_agent(
            runner, slot, item, lambda agent: ":".join(agent.client.identity())
        )

    def work(agent: Any) -> str:
        from herald.config import MissingSecretError
        from herald.gateway.sessions import config_with_model
        from herald.providers import ModelClient, ProviderConfigError

        try:
            client = ModelClient(
                config_with_model(settings.config, arg), settings.secrets, settings.home
            )
        except (ProviderConfigError, MissingSecretError) as exc:
            return f"Cannot switch: {exc}"
        agent.switch_model(client)
        runner.sessions.remember_model(agent, arg)
        provider, model = agent.client.identity()
        return f"Now using {provider}:{model} in this session."

    return await _with_agent(runner, slot, item, work)


async def cmd_rollback(runner: CommandRunner, slot: SessionSlot, item: WorkItem, arg: str) -> str:
    from herald.checkpoints import rollback_command

    # Through the agent (and its queue), so a restore never races a turn's writes.
    return await _with_agent(
        runner, slot, item, lambda agent: rollback_command(agent.checkpoints, arg)
    )


HANDLERS: dict[str, Handler] = {
    "help": cmd_help,
    "stop": cmd_stop,
    "steer": cmd_steer,
    "usage": cmd_usage,
    "agents": cmd_agents,
    "kanban": cmd_kanban,
    "approve": cmd_approve,
    "deny": cmd_deny,
    "new": cmd_new,
    "compress": cmd_compress,
    "model": cmd_model,
    "rollback": cmd_rollback,
}
assert set(HANDLERS) == set(COMMANDS), "every gateway command in the registry needs a handler"


__all__ = ["COMMANDS", "HANDLERS"]
