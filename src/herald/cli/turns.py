"""Building an agent for the CLI and running a turn so that Ctrl-C interrupts it."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from herald.cli.common import err_console, fail

if TYPE_CHECKING:
    from herald.config import Settings
    from herald.engine import Agent, AgentOptions, TurnCallbacks, TurnHandle, TurnResult
    from herald.state import StateStore

SECOND_CTRL_C_GRACE_SECONDS = 2.0

LOCAL_NOTICE = (
    "Using the built-in offline demo model (SmolLM2-135M, tiny and not a capable "
    "assistant). Configure a real provider with `herald setup` or see the README."
)


def build_agent(
    settings: Settings,
    store: StateStore,
    *,
    session_id: str | None = None,
    options: AgentOptions | None = None,
    callbacks: TurnCallbacks | None = None,
    announce_local: bool = True,
) -> Agent:
    """An agent for this home, or a clean exit naming what to fix."""
    from herald.config import ConfigError, MissingSecretError
    from herald.context import UnknownContextEngineError
    from herald.engine import Agent, AgentOptions
    from herald.providers import ModelClient, ProviderConfigError
    from herald.tools import ToolsetError

    try:
        client = ModelClient(settings.config, settings.secrets, settings.home)
    except (ProviderConfigError, MissingSecretError) as exc:
        fail(str(exc))
    if announce_local and client.local_auto_selected:
        err_console().print(LOCAL_NOTICE, style="yellow", highlight=False)
    from herald.toolbox import agent_tools
    from herald.tools.toolsets import bundle_for

    options = options or AgentOptions(source="cli")
    options.toolset = bundle_for(options.toolset, client.endpoint.provider)
    tools = agent_tools(settings)  # the built-ins plus the configured MCP servers' tools
    try:
        agent = Agent.open(
            settings,
            store,
            client=client,
            tools=tools,
            session_id=session_id,
            source=options.source,
            options=options,
            callbacks=callbacks,
        )
    except LookupError as exc:
        fail(str(exc).strip("'\""))
    except (ConfigError, ToolsetError, UnknownContextEngineError) as exc:
        fail(str(exc))
    if any(server.enabled for server in settings.config.mcp.servers.values()):
        from herald.mcp import mcp_failures

        for name, why in mcp_failures(tools).items():
            err_console().print(
                f"MCP server {name} is unavailable, its tools are missing: {why}",
                style="yellow",
                highlight=False,
            )
    return agent


def wait_interruptibly(handle: TurnHandle) -> TurnResult:
    """Wait for the turn; the first Ctrl-C interrupts it (the turn still ends cleanly with
    its exit reason, and its tools' processes are killed), a second one leaves sooner.

    The wait is on the handle's event, never `Thread.join`: a KeyboardInterrupt inside
    `join` can leave the thread looking finished while it still runs."""
    interrupted = False
    while True:
        try:
            if handle.wait(0.1):
                return handle.result()
        except KeyboardInterrupt:
            if interrupted:
                # Still give the turn a moment to kill its tools' process groups.
                handle.wait(SECOND_CTRL_C_GRACE_SECONDS)
                err_console().print("interrupted twice; leaving now", style="red")
                os._exit(130)
            interrupted = True
            handle.interrupt()


def expand_skill_command(settings: Settings, text: str, reserved: tuple[str, ...]) -> str | None:
    """`/SKILL-NAME args` → the instruction to load that skill and do `args` (None when the
    text is not a skill command)."""
    from herald.skills import SkillLibrary

    try:
        return SkillLibrary(settings.home, settings.config).expand_slash(text, reserved=reserved)
    except Exception:  # an unreadable skills folder: treat the text as ordinary input
        return None
