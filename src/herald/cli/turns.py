"""Building an agent for the CLI and running a turn so that Ctrl-C interrupts it."""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING

from herald.cli.common import err_console, fail

if TYPE_CHECKING:
    from herald.config import Settings
    from herald.engine import Agent, AgentOptions, TurnCallbacks, TurnResult
    from herald.state import StateStore

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
    from herald.engine import Agent
    from herald.providers import ModelClient, ProviderConfigError
    from herald.tools import ToolsetError

    try:
        client = ModelClient(settings.config, settings.secrets, settings.home)
    except (ProviderConfigError, MissingSecretError) as exc:
        fail(str(exc))
    if announce_local and client.local_auto_selected:
        err_console().print(LOCAL_NOTICE, style="yellow", highlight=False)
    if options is not None:
        from herald.tools.toolsets import bundle_for

        options.toolset = bundle_for(options.toolset, client.endpoint.provider)
    from herald.mcp import agent_registry, mcp_failures

    registry = agent_registry(settings)
    try:
        agent = Agent(
            config=settings.config,
            home=settings.home,
            store=store,
            client=client,
            registry=registry,  # the built-ins plus the configured MCP servers' tools
            session_id=session_id,
            options=options,
            callbacks=callbacks,
            secrets=settings.secrets,
        )
    except LookupError as exc:
        fail(str(exc).strip("'\""))
    except (ConfigError, ToolsetError, UnknownContextEngineError) as exc:
        fail(str(exc))
    for name, why in mcp_failures(registry).items():
        err_console().print(
            f"MCP server {name} is unavailable, its tools are missing: {why}",
            style="yellow",
            highlight=False,
        )
    return agent


def run_turn_interruptibly(agent: Agent, text: str) -> TurnResult:
    """Run the turn in a worker thread; the first Ctrl-C interrupts it (the turn still
    ends cleanly with its exit reason), a second one leaves at once."""
    box: dict[str, TurnResult | BaseException] = {}

    def work() -> None:
        try:
            box["result"] = agent.run_turn(text)
        except BaseException as exc:  # surfaced in the main thread
            box["error"] = exc

    worker = threading.Thread(target=work, name="herald-turn", daemon=True)
    worker.start()
    interrupted = False
    while worker.is_alive():
        try:
            worker.join(0.1)
        except KeyboardInterrupt:
            if interrupted:
                err_console().print("interrupted twice; leaving now", style="red")
                os._exit(130)
            interrupted = True
            agent.interrupt()
            err_console().print("interrupting… (Ctrl-C again to quit at once)", style="yellow")
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["result"]  # type: ignore[return-value]


def expand_skill_command(settings: Settings, text: str, reserved: tuple[str, ...]) -> str | None:
    """`/SKILL-NAME args` → the instruction to load that skill and do `args` (None when the
    text is not a skill command)."""
    from herald.skills import SkillLibrary

    try:
        return SkillLibrary(settings.home, settings.config).expand_slash(text, reserved=reserved)
    except Exception:  # an unreadable skills folder: treat the text as ordinary input
        return None
