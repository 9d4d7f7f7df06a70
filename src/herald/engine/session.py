"""Session lifecycle for an Agent: create or resume, and the frozen system prompt.

A new session gets its prompt built once and stored by hash. A resumed one
replays the stored bytes unless the runtime no longer matches the prompt's
model/provider/working-directory/platform lines, in which case it is rebuilt
and the reason logged (invariant 1). Resuming also repairs the transcript and
restores per-session state (token anchor, context-engine state, tool state).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from herald.context import (
    ROW_ID,
    PromptInputs,
    build_system_prompt,
    call_optional,
    discover_context_files,
    identity_of,
    prompt_mismatch,
)
from herald.engine.repair import repair_transcript
from herald.engine.transcript import PersistenceError, Transcript, api_view

if TYPE_CHECKING:
    from herald.engine.agent import Agent

log = logging.getLogger(__name__)

TITLE_CHARS = 60
META_ANCHOR = "token_anchor"
META_CONTEXT = "context_engine"


def title_from(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1] + "…"


def ensure_session(agent: Agent, first_text: str) -> None:
    if agent.session_id is not None:
        return
    provider, model = agent.client.identity()
    try:
        sid = agent.store.create_session(
            profile=agent.home.profile_label,
            source=agent.options.source,
            model=model,
            provider=provider,
            title=title_from(first_text),
            parent_id=agent.options.parent_session_id,
        )
    except Exception as exc:  # the store refused: sqlite error or StateError
        raise PersistenceError(f"could not create a session: {exc}") from exc
    attach(agent, sid)
    call_optional(agent.context_engine, "on_session_start", session_id=sid, state=None)
    install_system_prompt(agent, build_prompt(agent))


def attach(agent: Agent, session_id: str) -> None:
    agent.session_id = session_id
    agent.tool_context.session_id = session_id
    agent.transcript = Transcript(agent.store, session_id)


def resume_session(agent: Agent, session_id: str) -> None:
    session = agent.store.get_session(session_id)
    if session is None:
        raise LookupError(f"no session {session_id!r}")
    attach(agent, session.id)
    meta: dict[str, Any] = dict(getattr(session, "meta", None) or {})
    agent.session_meta = meta
    agent.accountant.load_meta(meta.get(META_ANCHOR))
    call_optional(
        agent.context_engine, "on_session_start", session_id=session.id, state=meta.get(META_CONTEXT)
    )
    stored = (
        agent.store.get_system_prompt(session.system_prompt_hash)
        if session.system_prompt_hash
        else None
    )
    provider, model = agent.client.identity()
    why = (
        prompt_mismatch(
            stored,
            provider=provider,
            model=model,
            cwd=agent.options.cwd,
            platform=agent.options.platform,
        )
        if stored is not None
        else "no stored system prompt"
    )
    if why is None:
        agent.system_prompt = stored
        stored_provider, stored_model = identity_of(stored)
        agent.session_identity = (stored_provider or "", stored_model or "")
    else:
        log.info("rebuilding the system prompt of session %s: %s", session.id, why)
        install_system_prompt(agent, build_prompt(agent))
    _repair(agent)


def _repair(agent: Agent) -> None:
    assert agent.transcript is not None
    report = repair_transcript(agent.transcript.load())
    if report.changed:
        log.warning(
            "repaired session %s: %d missing tool results, %d orphaned results",
            agent.session_id,
            report.inserted,
            report.dropped_orphans,
        )
    tail = report.tail_results  # a crash between a tool call and its result
    kept = report.messages[: len(report.messages) - len(tail)]
    # Results filled in mid-history are not stored (the same repair runs on every load).
    agent.transcript.messages = [m if ROW_ID in m else api_view(m, None) for m in kept]
    agent.transcript.extend(tail)
    agent.registry.restore_state(agent.transcript.messages, agent.tool_context)


def build_prompt(agent: Agent) -> str:
    provider, model = agent.client.identity()
    soul = None
    try:
        soul = agent.home.soul_path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        pass
    cfg = agent.config.context
    skills_index = ""
    try:
        from herald.skills import SkillLibrary

        skills_index = SkillLibrary(agent.home, agent.config).index_text()
    except Exception as exc:  # a broken skills folder must not stop a session
        log.warning("skills index unavailable: %s", exc)
    files = discover_context_files(
        agent.options.cwd, names=list(cfg.context_files), max_chars=cfg.context_file_max_chars
    )
    return build_system_prompt(
        PromptInputs(
            model=model,
            provider=provider,
            cwd=agent.options.cwd,
            session_id=agent.session_id or "",
            platform=agent.options.platform,
            identity=soul,
            tool_names=agent.enabled_tools,
            caller_system=agent.options.caller_system,
            context_files=tuple(files),
            skills_index=skills_index if "skill_view" in agent.enabled_tools else None,
            memory_blocks=tuple(agent.memory.system_prompt_blocks()) if agent.memory else (),
        )
    )


def install_system_prompt(agent: Agent, text: str) -> None:
    assert agent.session_id is not None
    try:
        prompt_hash = agent.store.put_system_prompt(text)
        agent.store.update_session(agent.session_id, system_prompt_hash=prompt_hash)
    except Exception as exc:  # the store refused: sqlite error or StateError
        raise PersistenceError(f"could not store the system prompt: {exc}") from exc
    agent.system_prompt = text
    agent.session_identity = agent.client.identity()


def save_meta(agent: Agent) -> None:
    """Persist the token anchor and the context engine's state with the session."""
    if agent.session_id is None:
        return
    meta = dict(agent.session_meta)
    meta[META_ANCHOR] = agent.accountant.to_meta()
    state = call_optional(agent.context_engine, "export_state")
    if state is not None:
        meta[META_CONTEXT] = state
    if meta == agent.session_meta:
        return
    try:
        agent.store.update_session(agent.session_id, meta=meta)
    except Exception as exc:  # the store refused: sqlite error or StateError
        raise PersistenceError(f"could not save session state: {exc}") from exc
    agent.session_meta = meta
