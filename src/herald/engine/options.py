"""How a surface configures the session an `Agent` holds (`AgentOptions`)."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from herald.tools import DEFAULT_BUNDLE

if TYPE_CHECKING:
    from herald.config.schema_gateway import HygieneConfig
    from herald.engine.budget import IterationBudget

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SessionSeed:
    """How a new session starts when it continues another one's exact request (a fork-mode
    sub-agent): this system prompt, stored verbatim instead of a built one, and these
    messages (API views) written as the session's first rows."""

    system_prompt: str
    messages: tuple[dict[str, Any], ...] = ()


@dataclass
class AgentOptions:
    # Where the session comes from: recorded on the session (cli, api, telegram, cron,
    # review, …) and shown to the model as its platform. One value: the two always
    # named the same thing.
    source: str = "cli"
    platform: str | None = None  # deprecated alias of `source`; kept so old callers work
    cwd: str = field(default_factory=os.getcwd)
    # The toolset bundle the surface exposes (config toolsets.enabled/disabled apply).
    toolset: str = DEFAULT_BUNDLE
    # Explicit tool names instead of the bundle (tests, restricted sub-agents).
    enabled_tools: tuple[str, ...] | None = None
    max_iterations: int | None = None  # overrides config agent.max_iterations
    max_turns: int | None = None  # deprecated alias of max_iterations
    parent_budget: IterationBudget | None = None
    caller_system: str | None = None  # a system message the caller supplied (API clients)
    parent_session_id: str | None = None  # lineage: the session this one was forked from
    # Compress a grown session before the turn starts (the gateway's preflight policy);
    # None: only the engine's own pressure checks run.
    hygiene: HygieneConfig | None = None
    # A new session starts from this prompt and history instead of a built prompt.
    seed: SessionSeed | None = None
    # Unattended turns (no humans): command patterns this job, worker or client may run
    # beyond the known read-only commands (with approvals.unattended_allow), and how the
    # owner adds one, "{pattern}" standing for the suggested pattern (the refusal says it).
    unattended_allow: tuple[str, ...] = ()
    unattended_hint: str = ""
    # The chat the session serves, "platform:chat[:thread]" (gateway sessions): tools
    # that send things back later (a scheduled job) may send only there.
    origin: str | None = None
    # The chat of `origin` as a place to upload files (herald.tools.ports.ChatFiles;
    # gateway chat sessions): the send_file tool's only destination.
    chat_files: Any = None
    # A sub-agent of herald.delegation: its tool context says so (ToolContext.delegated)
    # and Herald's admin commands and nested agents are refused from it.
    delegated: bool = False
    # Who this turn is for (config `identities`); a new session is recorded as theirs,
    # and every store read that recalls past conversations filters by it (invariant 19).
    identity: str = "owner"

    def __post_init__(self) -> None:
        if self.max_turns is not None:
            if self.max_iterations is None:
                self.max_iterations = self.max_turns
            self.max_turns = None
        if self.platform is not None and self.platform != self.source:
            log.info(
                "AgentOptions.platform=%r differs from source=%r; the source is used",
                self.platform,
                self.source,
            )
        self.platform = None


__all__ = ["AgentOptions", "SessionSeed"]
