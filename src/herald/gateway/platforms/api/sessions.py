"""The `/v1/sessions` views: stored sessions and their messages, read through the
state store and redacted before they leave. A key sees the API sessions of its own
identity (`sessions:own`) or every session (`sessions:all`); nothing else, whatever
id or prefix it names."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from herald.gateway.platforms.api.chat import ApiRequestError
from herald.gateway.platforms.api.keys import ApiCaller
from herald.gateway.platforms.api.models import (
    SessionDetail,
    SessionMessage,
    SessionSummary,
    SessionToolCall,
)

if TYPE_CHECKING:
    from herald.state import SessionRecord, StateStore, StoredMessage

Redactor = Callable[[str], str]
API_SOURCE = "api"


def _clean(text: str | None, redact: Redactor) -> str | None:
    return None if text is None else redact(text)


def summary(record: SessionRecord, redact: Redactor) -> SessionSummary:
    return SessionSummary(
        id=record.id,
        title=_clean(record.title, redact),
        source=record.source,
        identity=record.identity,
        profile=record.profile,
        model=record.model,
        created_at=record.created_at,
        updated_at=record.updated_at,
        prompt_tokens=record.prompt_tokens,
        completion_tokens=record.completion_tokens,
        api_calls=record.api_calls,
        last_exit_reason=record.last_exit_reason,
    )


def _tool_calls(calls: list[dict[str, Any]] | None, redact: Redactor) -> list[SessionToolCall]:
    out: list[SessionToolCall] = []
    for call in calls or []:
        function = call.get("function") if isinstance(call.get("function"), dict) else {}
        arguments = function.get("arguments")
        out.append(
            SessionToolCall(
                id=call.get("id") if isinstance(call.get("id"), str) else None,
                name=function.get("name") if isinstance(function.get("name"), str) else None,
                arguments=redact(arguments) if isinstance(arguments, str) else None,
            )
        )
    return out


def message_view(message: StoredMessage, redact: Redactor) -> SessionMessage:
    return SessionMessage(
        seq=message.seq,
        role=message.role,
        content=_clean(message.content, redact),
        tool_calls=_tool_calls(message.tool_calls, redact) or None,
        tool_name=message.tool_name,
        tool_call_id=message.tool_call_id,
        created_at=message.created_at,
    )


def find_session(store: StateStore, session_id: str) -> SessionRecord:
    """The session with this id (or unique id prefix); 404 otherwise."""
    from herald.state import StateError

    try:
        full = store.resolve_session_id(session_id)
    except StateError as exc:
        raise ApiRequestError(404, str(exc), param="session_id", code="session_not_found") from exc
    record = store.get_session(full)
    if record is None:  # pragma: no cover - resolved ids exist
        raise ApiRequestError(404, f"no session {session_id!r}", code="session_not_found")
    return record


def require(caller: ApiCaller, scope: str) -> None:
    if not caller.may(scope):
        raise ApiRequestError(
            403,
            f"the key {caller.name!r} does not have the {scope!r} scope; add it to the key's "
            "scopes under gateway.platforms.api.keys, or use a key that has it",
            code="missing_scope",
            error_type="permission_error",
        )


def require_reader(caller: ApiCaller) -> None:
    if not caller.reads_sessions:
        raise ApiRequestError(
            403,
            f"the key {caller.name!r} may not read sessions (it needs the 'sessions:own' or "
            "'sessions:all' scope under gateway.platforms.api.keys)",
            code="missing_scope",
            error_type="permission_error",
        )


def not_yours(session_id: str) -> ApiRequestError:
    # The same answer whether the session belongs to another identity or another
    # entrance, so a caller learns nothing more than "not for this key".
    return ApiRequestError(
        403,
        f"session {session_id} is not one of this key's sessions: a key sees only the API "
        "sessions of its own identity unless it has the 'sessions:all' scope",
        param="session_id",
        code="session_forbidden",
        error_type="permission_error",
    )


def visible(caller: ApiCaller, record: SessionRecord) -> bool:
    if caller.sees_every_session:
        return True
    return record.identity == caller.identity and record.source == API_SOURCE


def list_sessions(
    store: StateStore, redact: Redactor, caller: ApiCaller, *, limit: int, source: str | None
) -> list[SessionSummary]:
    if caller.sees_every_session:
        records = store.list_sessions(limit=limit, source=source)
    elif source not in (None, API_SOURCE):
        records = []  # other entrances' sessions are not this key's to list
    else:
        records = store.list_sessions(limit=limit, source=API_SOURCE, identity=caller.identity)
    return [summary(r, redact) for r in records]


def session_detail(
    store: StateStore, session_id: str, redact: Redactor, caller: ApiCaller
) -> SessionDetail:
    record = find_session(store, session_id)
    if not visible(caller, record):
        raise not_yours(record.id)
    messages = [message_view(m, redact) for m in store.get_messages(record.id)]
    return SessionDetail(**summary(record, redact).model_dump(), messages=messages)
