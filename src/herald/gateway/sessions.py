"""Finding or creating the Herald session (and its agent) behind a session key.

The key → session id map lives in state.db (`gateway_sessions`), so a restart keeps
every conversation; `/new` drops the mapping and the next message starts a fresh
session. A new session is created before its first turn (with the chat's platform
as its source and the message as its title) so the map, and the in-flight record a
restart resumes from, exist before anything can go wrong. A per-session model chosen
with `/model NAME` is kept in the session's meta and applied when the agent is rebuilt.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from herald.config.schema_gateway import GatewayConfig, HygieneConfig
from herald.config.schema_identities import OWNER, Identity
from herald.gateway.agents import AgentCache
from herald.state.gateway_tables import GatewayState

if TYPE_CHECKING:
    from herald.config import HeraldConfig, Settings
    from herald.state import StateStore
    from herald.tools import ToolRegistry

log = logging.getLogger(__name__)

MODEL_META_KEY = "gateway_model"
DEFAULT_CHAT_TOOLSET = "herald-chat"


@dataclass(frozen=True)
class AgentRequest:
    key: str
    profile: str
    platform: str
    first_text: str
    caller_system: str | None = None  # a system message the caller supplied (API clients)
    origin: str | None = None  # platform:chat[:thread] of the conversation
    identity: Identity | None = None  # who the turn is for; None: the owner
    chat_files: Any = None  # the chat as a place for files (herald.gateway.files_out)


def toolset_for(platform: str, config: GatewayConfig) -> str:
    """`gateway.toolsets[platform]`, else ``herald-<platform>`` when that bundle exists
    (herald-api, herald-webhook), else the chat bundle (the terminal's tools and
    send_file)."""
    from herald.tools import BUILTIN_TOOLSETS

    configured = config.toolsets.get(platform)
    if configured:
        return configured
    own = f"herald-{platform}"
    return own if own in BUILTIN_TOOLSETS else DEFAULT_CHAT_TOOLSET


def config_for_identity(config: HeraldConfig, identity: Identity | None) -> HeraldConfig:
    """`config` with the identity's tools hidden (`toolsets.disabled`), so its turns are
    never offered them: hidden tools are neither sent to the model nor callable."""
    if identity is None or not identity.disabled_tools:
        return config
    copy = config.model_copy(deep=True)
    copy.toolsets.disabled = list(
        dict.fromkeys([*copy.toolsets.disabled, *identity.disabled_tools])
    )
    return copy


def only_tools(
    identity: Identity | None, toolset: str, config: HeraldConfig, registry: Any
) -> tuple[str, ...] | None:
    """For an identity limited to a known list (guests): what the surface offers, cut to
    that list. An explicit list also leaves out MCP servers' and plugins' tools, which
    no denylist can name in advance. None: the surface's tools as configured."""
    if identity is None or identity.only_tools is None:
        return None
    from herald.tools import available_tool_names

    offered = available_tool_names(toolset, config, registry)
    return tuple(name for name in offered if name in identity.only_tools)


def config_with_model(config: HeraldConfig, model: str | None) -> HeraldConfig:
    if not model or model == config.model.name:
        return config
    copy = config.model_copy(deep=True)
    copy.model.name = model
    return copy


def build_agent(
    settings: Settings,
    store: StateStore,
    *,
    session_id: str | None,
    platform: str,
    toolset: str,
    cwd: str,
    first_text: str,
    caller_system: str | None = None,
    hygiene: HygieneConfig | None = None,
    origin: str | None = None,
    identity: Identity | None = None,
    tools: ToolRegistry | None = None,
    chat_files: Any = None,
) -> Any:
    """An agent on `session_id`, or on a session created now (blocking). `tools`: the
    gateway's registry (a new one of the built-ins when not given); the configured MCP
    servers' tools go on an overlay of it for this agent."""
    from herald.engine import Agent, AgentOptions
    from herald.toolbox import agent_tools

    record = store.get_session(session_id) if session_id else None
    if record is not None and record.identity != (identity.name if identity else OWNER):
        # The key points at another identity's session (the config changed who an
        # account is): start a session of this identity's own rather than resume that.
        log.warning(
            "session %s belongs to %s, not %s; starting a new one",
            record.id,
            record.identity,
            identity.name if identity else OWNER,
        )
        record = None
    model = (record.meta.get(MODEL_META_KEY) if record is not None else None) or None
    config = config_for_identity(config_with_model(settings.config, model), identity)
    registry = agent_tools(settings, base=tools)
    return Agent.open(
        settings,
        store,
        session_id=record.id if record is not None else None,
        source=platform,
        title=first_text,
        config=config,
        tools=registry,
        options=AgentOptions(
            toolset=toolset,
            cwd=cwd,
            caller_system=caller_system,
            hygiene=hygiene,
            origin=origin,
            identity=identity.name if identity is not None else OWNER,
            enabled_tools=only_tools(identity, toolset, config, registry),
            chat_files=chat_files,
        ),
    )


def knows_newest_row(agent: Any, store: StateStore) -> bool:
    """Whether the agent's history in memory ends with the newest row stored for its
    session (nobody else wrote to it since). An agent whose history is not loaded yet
    loads it on its first turn, so it is current."""
    transcript = agent.transcript
    if transcript is None or agent.session_id is None:
        return True
    mine = max((m.row_id for m in transcript.messages if m.row_id is not None), default=None)
    return store.newest_message_id(agent.session_id) == mine


class SessionManager:
    def __init__(
        self,
        *,
        state: GatewayState,
        cache: AgentCache,
        config: GatewayConfig,
        settings_for: Callable[[str], Settings],
        store_for: Callable[[str], StateStore],
        executor: Executor,
        tools: ToolRegistry | None = None,
    ):
        self.state = state
        # The gateway's tools, one registry its agents share (each puts its own tools,
        # MCP servers' and plugins', on an overlay); made on first use when not given.
        self.tools = tools
        self.cache = cache
        self.config = config
        self.settings_for = settings_for
        self.store_for = store_for
        self.executor = executor
        self.cwd = config.cwd or os.getcwd()

    def session_id(self, key: str) -> str | None:
        return self.state.session_for(key)

    async def acquire(self, request: AgentRequest) -> Any:
        """The cached agent of `request.key`, or one built (and cached) now; pinned until
        `release`."""
        session_id = self.state.session_for(request.key)
        entry = self.cache.get(request.key)
        store = self.store_for(request.profile)
        if entry is not None and session_id is not None and entry.agent.session_id == session_id:
            if knows_newest_row(entry.agent, store):
                self.cache.pin(request.key)
                return entry.agent
            # Someone else wrote to the session since (another entrance bound to it, another
            # process): an agent answering from its old view would leave that out, and its
            # next compression would name rows that are no longer there. Rebuild it.
            log.info("session %s changed outside agent %s; rebuilding it", session_id, request.key)
            self.cache.discard(request.key)
        settings = self.settings_for(request.profile)
        if self.tools is None:
            from herald.toolbox import gateway_tools

            self.tools = gateway_tools()
        tools = self.tools
        loop = asyncio.get_running_loop()
        agent = await loop.run_in_executor(
            self.executor,
            lambda: build_agent(
                settings,
                store,
                session_id=session_id,
                platform=request.platform,
                toolset=toolset_for(request.platform, self.config),
                cwd=self.cwd,
                first_text=request.first_text,
                caller_system=request.caller_system,
                hygiene=self.config.hygiene if self.config.hygiene.enabled else None,
                origin=request.origin,
                identity=request.identity,
                tools=tools,
                chat_files=request.chat_files,
            ),
        )
        if agent.session_id != session_id:
            self.state.bind_session(request.key, request.profile, agent.session_id)
            log.info("session key %s → new session %s", request.key, agent.session_id)
        self.cache.put(request.key, agent, request.profile)
        self.cache.pin(request.key)
        return agent

    def release(self, key: str) -> None:
        self.cache.unpin(key)
        self.cache.evict()

    def bind(self, key: str, profile: str, session_id: str) -> None:
        """Point `key` at a stored session (the API's /v1/sessions/{id})."""
        if self.state.session_for(key) != session_id:
            self.cache.discard(key)
            self.state.bind_session(key, profile, session_id)

    def reset(self, key: str) -> str | None:
        """`/new`: forget the mapping and close the cached agent; the old session id."""
        old = self.state.session_for(key)
        self.cache.discard(key)
        self.state.unbind_session(key)
        return old

    def remember_model(self, agent: Any, model: str) -> None:
        agent.update_session_meta(**{MODEL_META_KEY: model})


__all__ = [
    "DEFAULT_CHAT_TOOLSET",
    "MODEL_META_KEY",
    "AgentRequest",
    "SessionManager",
    "build_agent",
    "config_with_model",
    "toolset_for",
]
