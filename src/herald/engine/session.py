"""Session lifecycle: create or resume, and the frozen system prompt.

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
    PromptInputs,
    build_system_prompt,
    discover_context_files,
    identity_of,
    prompt_mismatch,
)
from herald.engine.repair import repair_transcript
from herald.engine.transcript import PersistenceError, Transcript

if TYPE_CHECKING:
    from herald.engine.turn_context import SessionRuntime

log = logging.getLogger(__name__)

TITLE_CHARS = 60
META_ANCHOR = "token_anchor"
META_CONTEXT = "context_engine"
# The chat a gateway session serves (its origin): herald.state.history.CHAT_META_KEY,
# which finds replies across the per-identity sessions of one group chat.
META_CHAT = "chat"


def title_from(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1] + "…"


def ensure_session(rt: SessionRuntime, first_text: str) -> None:
    if rt.state.id is not None:
        return
    provider, model = rt.state.client.identity()
    try:
        sid = rt.store.create_session(
            profile=rt.home.profile_label,
            source=rt.options.source,
            model=model,
            provider=provider,
            title=title_from(first_text) or None,
            parent_id=rt.options.parent_session_id,
            identity=rt.options.identity,
        )
    except Exception as exc:  # the store refused: sqlite error or StateError
        raise PersistenceError(f"could not create a session: {exc}") from exc
    attach(rt, sid)
    if rt.options.origin:  # the chat it serves: search finds replies across its sessions
        update_meta(rt, {META_CHAT: rt.options.origin})
    rt.context_engine.on_session_start(session_id=sid, state=None)
    seed = rt.options.seed
    if seed is None:
        install_system_prompt(rt, build_prompt(rt))
        return
    install_system_prompt(rt, seed.system_prompt)  # the other session's bytes, verbatim
    assert rt.state.transcript is not None
    # A fork continues its parent's request: those rows are copies (untrusted ones still
    # fenced in their text), never the owner's own words here; the owner's words count
    # from the parent's rows, which the taint check reads first (herald.engine.taint_gate).
    rt.state.transcript.extend([{"provenance": "trusted", **m} for m in seed.messages])


def attach(rt: SessionRuntime, session_id: str) -> None:
    rt.state.id = session_id
    rt.tool_context.session_id = session_id
    rt.state.transcript = Transcript(rt.store, session_id)


def resume_session(rt: SessionRuntime, session_id: str) -> None:
    session = rt.store.get_session(session_id)
    if session is None:
        raise LookupError(f"no session {session_id!r}")
    attach(rt, session.id)
    meta: dict[str, Any] = dict(getattr(session, "meta", None) or {})
    rt.state.meta = meta
    rt.accountant.load_meta(meta.get(META_ANCHOR))
    rt.context_engine.on_session_start(session_id=session.id, state=meta.get(META_CONTEXT))
    stored = (
        rt.store.get_system_prompt(session.system_prompt_hash)
        if session.system_prompt_hash
        else None
    )
    provider, model = rt.state.client.identity()
    why = (
        prompt_mismatch(
            stored,
            provider=provider,
            model=model,
            cwd=rt.options.cwd,
            platform=rt.options.source,
        )
        if stored is not None
        else "no stored system prompt"
    )
    if why is None:
        rt.state.system_prompt = stored
        stored_provider, stored_model = identity_of(stored)
        rt.state.identity = (stored_provider or "", stored_model or "")
    else:
        log.info("rebuilding the system prompt of session %s: %s", session.id, why)
        install_system_prompt(rt, build_prompt(rt))
    _repair(rt)


def _repair(rt: SessionRuntime) -> None:
    transcript = rt.state.transcript
    assert transcript is not None
    transcript.messages = transcript.load()
    report = repair_transcript(transcript.messages)
    if report.changed:
        log.warning(
            "repaired session %s: %d missing tool results, %d orphaned results",
            rt.state.id,
            report.inserted,
            report.dropped_orphans,
        )
    tail = report.tail_results  # a crash between a tool call and its result
    kept = report.messages[: len(report.messages) - len(tail)]
    # Results filled in mid-history are not stored (the same repair runs on every load).
    transcript.messages = kept
    transcript.extend(tail)
    rt.tools.restore_state(transcript.api_messages(), rt.tool_context)


def build_prompt(rt: SessionRuntime) -> str:
    provider, model = rt.state.client.identity()
    soul = None
    try:
        soul = rt.home.soul_path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        pass
    cfg = rt.config.context
    skills_index = ""
    try:
        from herald.skills import SkillLibrary

        skills_index = SkillLibrary(rt.home, rt.config).index_text()
    except Exception as exc:  # a broken skills folder must not stop a session
        log.warning("skills index unavailable: %s", exc)
    files = discover_context_files(
        rt.options.cwd, names=list(cfg.context_files), max_chars=cfg.context_file_max_chars
    )
    tool_names = rt.select_tools().names
    return build_system_prompt(
        PromptInputs(
            model=model,
            provider=provider,
            cwd=rt.options.cwd,
            session_id=rt.state.id or "",
            platform=rt.options.source,
            identity=soul,
            tool_names=tool_names,
            caller_system=rt.options.caller_system,
            context_files=tuple(files),
            skills_index=skills_index if "skill_view" in tool_names else None,
            memory_blocks=tuple(rt.memory.system_prompt_blocks()) if rt.memory else (),
        )
    )


def install_system_prompt(rt: SessionRuntime, text: str) -> None:
    assert rt.state.id is not None
    try:
        prompt_hash = rt.store.put_system_prompt(text)
        rt.store.update_session(rt.state.id, system_prompt_hash=prompt_hash)
    except Exception as exc:  # the store refused: sqlite error or StateError
        raise PersistenceError(f"could not store the system prompt: {exc}") from exc
    rt.state.system_prompt = text
    rt.state.identity = rt.state.client.identity()


def update_meta(rt: SessionRuntime, updates: dict[str, Any]) -> None:
    """Set (or, with a None value, remove) keys of the session's meta, on disk first."""
    if rt.state.id is None:
        raise PersistenceError("the session has not started yet")
    meta = dict(rt.state.meta)
    for key, value in updates.items():
        if value is None:
            meta.pop(key, None)
        else:
            meta[key] = value
    try:
        rt.store.update_session(rt.state.id, meta=meta)
    except Exception as exc:  # the store refused: sqlite error or StateError
        raise PersistenceError(f"could not save session state: {exc}") from exc
    rt.state.meta = meta


def save_meta(rt: SessionRuntime) -> None:
    """Persist the token anchor and the context engine's state with the session."""
    if rt.state.id is None:
        return
    meta = dict(rt.state.meta)
    meta[META_ANCHOR] = rt.accountant.to_meta()
    state = rt.context_engine.export_state()
    if state is not None:
        meta[META_CONTEXT] = state
    if meta == rt.state.meta:
        return
    try:
        rt.store.update_session(rt.state.id, meta=meta)
    except Exception as exc:  # the store refused: sqlite error or StateError
        raise PersistenceError(f"could not save session state: {exc}") from exc
    rt.state.meta = meta
