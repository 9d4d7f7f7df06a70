"""The HTTP API's FastAPI app: OpenAI-compatible chat completions and models, Herald's
session endpoints, bearer auth on every path, OpenAI-style error bodies.

`build_api_app(backend)` only builds the app (tests can mount it anywhere); the
adapter in `api.py` serves it and runs the turns.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Protocol

from fastapi import Depends, FastAPI, Header, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, StreamingResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.exceptions import HTTPException as StarletteHTTPException

from herald.gateway.contracts import DispatchResult
from herald.gateway.platforms.api.chat import (
    ApiRequestError,
    ChatInput,
    ChunkWriter,
    chat_completion,
    completion_id,
    interpret,
    usage_from,
)
from herald.gateway.platforms.api.conversations import Conversation
from herald.gateway.platforms.api.keys import CHAT, ApiCaller, KeyRing
from herald.gateway.platforms.api.models import (
    ERROR_RESPONSES,
    ChatCompletion,
    ChatCompletionRequest,
    ModelCard,
    ModelList,
    SessionDetail,
    SessionList,
    SessionMessageRequest,
    SessionReply,
)
from herald.gateway.platforms.api.openapi import install_openapi
from herald.gateway.platforms.api.sessions import (
    find_session,
    list_sessions,
    not_yours,
    require,
    require_reader,
    session_detail,
)
from herald.gateway.platforms.api.stream import StreamRedactor
from herald.gateway.served.server import bearer_token
from herald.safety import BodyRule, RequestGuard

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Receive, Scope, Send

    from herald.state import StateStore

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 4 * 1024 * 1024
NO_BODY_BYTES = 64 * 1024  # GET and friends: no route reads a body
KEEPALIVE_SECONDS = 15.0
_STARTED = int(time.time())
_REPLY_STATUSES = frozenset({"replied", "command"})
_BEARER = HTTPBearer(auto_error=False, description="`api_key` or one of `keys`")


class ApiBackend(Protocol):
    """What the app needs from the adapter."""

    keyring: KeyRing
    model_name: str

    def redact(self, text: str) -> str: ...

    def extra_secrets(self) -> tuple[str, ...]: ...

    def store(self) -> StateStore: ...

    def start_chat_turn(
        self,
        key: str,
        text: str,
        *,
        caller_system: str | None,
        message_id: str,
        on_delta: Callable[[str], None] | None,
        identity: str = ...,
    ) -> asyncio.Future[DispatchResult]: ...

    def start_conversation_turn(
        self,
        conversation: Conversation,
        *,
        identity: str,
        message_id: str,
        on_delta: Callable[[str], None] | None = None,
    ) -> asyncio.Future[DispatchResult]: ...

    def start_session_turn(
        self,
        session_id: str,
        text: str,
        *,
        message_id: str,
        caller_system: str | None = None,
        on_delta: Callable[[str], None] | None = None,
        identity: str = ...,
    ) -> asyncio.Future[DispatchResult]: ...


def error_response(error: ApiRequestError, redact: Callable[[str], str]) -> JSONResponse:
    headers = {"WWW-Authenticate": "Bearer"} if error.status == 401 else None
    body = {
        "error": {
            "message": redact(error.message),
            "type": error.error_type,
            "param": error.param,
            "code": error.code,
        }
    }
    return JSONResponse(body, status_code=error.status, headers=headers)


def result_error(result: DispatchResult, redact: Callable[[str], str]) -> ApiRequestError | None:
    """The error a non-reply dispatch result becomes (None for a reply)."""
    status = result.status
    if status in _REPLY_STATUSES:
        return None
    text = redact(result.text.strip()) if result.text else ""
    if status in ("queued", "steered", "interrupted"):
        return ApiRequestError(
            409,
            "the session is busy with another turn; retry when it has finished"
            + (f" ({text})" if text else ""),
            code="session_busy",
        )
    if status in ("ignored", "pairing"):
        return ApiRequestError(
            403,
            text or "this caller may not talk to Herald here",
            code=f"not_allowed_{status}",
            error_type="permission_error",
        )
    return ApiRequestError(500, text or "the turn failed", code=result.exit_reason or "turn_failed")


def _param_of(loc: tuple[Any, ...]) -> str | None:
    parts = [p for p in loc if p not in ("body", "query", "path", "header")]
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or None


CALLER_SCOPE_KEY = "herald.api_caller"


class BearerAuth:
    """Pure ASGI middleware: every HTTP request (docs and unknown paths included) needs
    `Authorization: Bearer <key>` with one of the configured keys, compared in constant
    time; the caller it names (identity and scopes) rides on the request scope."""

    def __init__(self, app: ASGIApp, keyring: KeyRing) -> None:
        self.app = app
        self.keyring = keyring

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            header = None
            for name, value in scope.get("headers", ()):
                if name == b"authorization":
                    header = value.decode("latin-1")
                    break
            caller = self.keyring.caller_for(bearer_token(header))
            if caller is None:
                message = (
                    "missing bearer token: send Authorization: Bearer <api key>"
                    if header is None
                    else "invalid API key"
                )
                error = ApiRequestError(401, message, code="invalid_api_key")
                await error_response(error, str)(scope, receive, send)
                return
            scope = {**scope, CALLER_SCOPE_KEY: caller}
        await self.app(scope, receive, send)


def caller_of(request: Request) -> ApiCaller:
    """The caller `BearerAuth` matched; a route that needs one without the middleware in
    front is refused rather than served as anybody."""
    caller = request.scope.get(CALLER_SCOPE_KEY)
    if not isinstance(caller, ApiCaller):
        raise ApiRequestError(401, "invalid API key", code="invalid_api_key")
    return caller


Caller = Annotated[ApiCaller, Depends(caller_of)]


def body_too_large() -> ApiRequestError:
    return ApiRequestError(
        413,
        f"the request body is larger than the limit of {MAX_BODY_BYTES // (1024 * 1024)} MiB "
        f"({MAX_BODY_BYTES} bytes); send a shorter conversation",
        code="body_too_large",
    )


MAX_JSON_DEPTH = 64
_BODY_METHODS = ("POST", "PUT", "PATCH")


def _body_rule(method: str, _path: str) -> BodyRule:
    if method in _BODY_METHODS:
        return BodyRule(MAX_BODY_BYTES, json_depth=MAX_JSON_DEPTH)
    return BodyRule(NO_BODY_BYTES)


def _refusal(status: int, code: str, message: str) -> ASGIApp:
    if code == "body_too_large" and status == 413:
        return error_response(body_too_large(), str)
    return error_response(ApiRequestError(status, message, param="body", code=code), str)


class RequestShape:
    """Pure ASGI middleware for what reaches the routes: the shared `RequestGuard`
    (a body over the limit is refused by its Content-Length unread, or while it
    streams in; JSON nesting is bounded before anything parses it), and a POST body is
    read as JSON whatever its Content-Type says (curl's ``-d`` sends
    ``application/x-www-form-urlencoded``; no route takes a form)."""

    def __init__(self, app: ASGIApp) -> None:
        self.guard = RequestGuard(app, rule_for=_body_rule, refuse=_refusal)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope.get("method") in _BODY_METHODS:
            headers = [(k, v) for k, v in scope.get("headers", ()) if k != b"content-type"]
            scope = {**scope, "headers": [*headers, (b"content-type", b"application/json")]}
        await self.guard(scope, receive, send)


def build_api_app(backend: ApiBackend) -> FastAPI:
    app = FastAPI(
        title="Herald API",
        version="1",
        summary="OpenAI-compatible chat completions and Herald sessions",
        description=(
            "Every request needs `Authorization: Bearer <api key>`. In a named session "
            "Herald keeps the history: a chat completion uses only the LAST `user` message "
            "as the new input (leading `system` messages become the session's caller "
            "system message when the session starts). The session is chosen by the "
            "`X-Herald-Session` header, else the `user` field. A request with neither is "
            "stateless, as with OpenAI: the conversation is the request's messages (its "
            "system message and history are what the model sees), stored as one Herald "
            "session per distinct conversation. Requests for one session run one at a "
            "time, in arrival order."
        ),
        docs_url=None,
        redoc_url=None,
        redirect_slashes=False,  # its Location would come from the client's Host header
        telemetry={
            "tracing": False,
            "metrics": False,
            "logs": False,
            "operation_spans": False,
            "auto_configure": False,
        },
    )
    app.add_middleware(RequestShape)
    app.add_middleware(BearerAuth, keyring=backend.keyring)  # outermost: auth first

    def authorized(
        credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_BEARER)],
    ) -> None:
        # The middleware already refused; this documents the scheme and double-checks.
        token = credentials.credentials if credentials else None
        if backend.keyring.caller_for(token) is None:
            raise ApiRequestError(401, "invalid API key", code="invalid_api_key")

    auth = [Depends(authorized)]

    @app.exception_handler(ApiRequestError)
    async def _api_error(request: Request, exc: ApiRequestError) -> JSONResponse:
        return error_response(exc, backend.redact)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        first = errors[0] if errors else {}
        loc = tuple(first.get("loc", ()))
        if first.get("type") == "json_invalid":
            error = ApiRequestError(400, "the request body is not valid JSON", param="body")
        elif loc == ("body",) and first.get("type") == "missing":
            error = ApiRequestError(
                400,
                "the request body is empty: send a JSON object with `messages`, e.g. "
                '{"messages": [{"role": "user", "content": "Hello"}]}',
                param="messages",
            )
        elif first.get("type") == "missing" and _param_of(loc):
            param = _param_of(loc)
            error = ApiRequestError(400, f"the field {param!r} is required", param=param)
        else:
            param = _param_of(loc)
            what = first.get("msg", "invalid value")
            where = f"invalid {param!r}" if param else "invalid request"
            error = ApiRequestError(400, f"{where}: {what}", param=param)
        return error_response(error, backend.redact)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        if exc.status_code == 413:
            return error_response(body_too_large(), backend.redact)
        code = {404: "not_found", 405: "method_not_allowed"}
        error = ApiRequestError(exc.status_code, str(exc.detail), code=code.get(exc.status_code))
        return error_response(error, backend.redact)

    @app.exception_handler(Exception)
    async def _crash(request: Request, exc: Exception) -> JSONResponse:
        log.exception("API request failed")
        error = ApiRequestError(500, f"internal error: {type(exc).__name__}", code="internal")
        return error_response(error, backend.redact)

    @app.get("/v1/models", response_model=ModelList, dependencies=auth, tags=["openai"])
    async def models() -> ModelList:
        """The one model this server answers as (`gateway.platforms.api.model_name`)."""
        return ModelList(data=[ModelCard(id=backend.model_name, created=_STARTED)])

    @app.post(
        "/v1/chat/completions",
        response_model=ChatCompletion,
        responses=ERROR_RESPONSES,
        dependencies=auth,
        tags=["openai"],
    )
    async def chat_completions(
        caller: Caller,
        body: ChatCompletionRequest,
        x_herald_session: Annotated[
            str | None, Header(description="session name; wins over `user`")
        ] = None,
    ) -> Any:
        """Run one turn. `stream: true` answers with `chat.completion.chunk` SSE events
        ending in `data: [DONE]` (plus a usage chunk with `stream_options.include_usage`)."""
        require(caller, CHAT)
        chat = interpret(body, x_herald_session)
        cid = completion_id()
        turn = _chat_turn(backend, chat, cid, caller.identity)
        if body.stream:
            include_usage = bool(body.stream_options and body.stream_options.include_usage)
            writer = ChunkWriter(cid, backend.model_name, include_usage=include_usage)
            return StreamingResponse(
                _stream_turn(backend, writer, turn),
                media_type="text/event-stream",
                headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
            )
        result = await asyncio.shield(turn.start(None))
        failure = result_error(result, backend.redact)
        if failure is not None:
            raise failure
        reply = chat_completion(
            cid,
            backend.model_name,
            backend.redact(result.text),
            result.exit_reason,
            usage_from(result.usage),
        )
        headers = {"X-Herald-Session-Id": result.session_id} if result.session_id else None
        return JSONResponse(reply.model_dump(), headers=headers)

    @app.get("/v1/sessions", response_model=SessionList, dependencies=auth, tags=["sessions"])
    async def sessions(
        caller: Caller,
        limit: Annotated[int, Query(ge=1, le=500)] = 50,
        source: Annotated[str | None, Query(description="only sessions from this entrance")] = None,
    ) -> SessionList:
        """Stored sessions, most recently active first: the API sessions of the key's
        identity, or every session with the `sessions:all` scope."""
        require_reader(caller)
        rows = await asyncio.to_thread(
            list_sessions, backend.store(), backend.redact, caller, limit=limit, source=source
        )
        return SessionList(data=rows)

    @app.get(
        "/v1/sessions/{session_id}",
        response_model=SessionDetail,
        responses={404: ERROR_RESPONSES[400] | {"description": "no such session"}},
        dependencies=auth,
        tags=["sessions"],
    )
    async def session(
        caller: Caller,
        session_id: Annotated[str, Path(description="id or unique prefix")],
    ) -> SessionDetail:
        """One session with its active messages (secrets redacted); 403 for a session the
        key may not see."""
        require_reader(caller)
        return await asyncio.to_thread(
            session_detail, backend.store(), session_id, backend.redact, caller
        )

    @app.post(
        "/v1/sessions/{session_id}/messages",
        response_model=SessionReply,
        responses=ERROR_RESPONSES | {404: {"description": "no such session"}},
        dependencies=auth,
        tags=["sessions"],
    )
    async def post_message(
        caller: Caller,
        session_id: Annotated[str, Path(description="id or unique prefix of an API session")],
        body: SessionMessageRequest,
    ) -> SessionReply:
        """Run a turn in this stored session and return the reply."""
        require(caller, CHAT)
        record = await asyncio.to_thread(find_session, backend.store(), session_id)
        # Posting is a turn as this caller's identity, so only into its own sessions,
        # whatever else sessions:all lets it read.
        if record.identity != caller.identity:
            raise not_yours(record.id)
        if record.source != "api":
            raise ApiRequestError(
                409,
                f"session {record.id} was started on {record.source}; the API can post only "
                "to its own sessions (source api) - continue it on that entrance instead",
                param="session_id",
                code="session_not_api",
            )
        result = await asyncio.shield(
            backend.start_session_turn(
                record.id, body.content, message_id=completion_id(), identity=caller.identity
            )
        )
        failure = result_error(result, backend.redact)
        if failure is not None:
            raise failure
        return SessionReply(
            session_id=result.session_id or record.id,
            status=result.status,
            content=backend.redact(result.text),
            exit_reason=result.exit_reason,
            usage=usage_from(result.usage),
        )

    install_openapi(app)
    return app


@dataclass
class ChatTurn:
    """How one chat request runs: in a named session, or (stateless) in the session of
    its conversation (found, and told the reply, by the adapter under its lock)."""

    start: Callable[[Callable[[str], None] | None], asyncio.Future[DispatchResult]]


def _chat_turn(backend: ApiBackend, chat: ChatInput, cid: str, identity: str) -> ChatTurn:
    if chat.session_key is not None:
        key = chat.session_key
        return ChatTurn(
            start=lambda on_delta: backend.start_chat_turn(
                key,
                chat.text,
                caller_system=chat.caller_system,
                message_id=cid,
                on_delta=on_delta,
                identity=identity,
            )
        )
    conversation = Conversation(chat.caller_system, chat.history, chat.text)
    return ChatTurn(
        start=lambda on_delta: backend.start_conversation_turn(
            conversation, identity=identity, message_id=cid, on_delta=on_delta
        )
    )


async def _stream_turn(
    backend: ApiBackend, writer: ChunkWriter, chat_turn: ChatTurn
) -> AsyncIterator[bytes]:
    """SSE frames for one turn. The turn is not cancelled when the client goes away: it
    finishes and its reply stays in the session's history."""
    loop = asyncio.get_running_loop()
    deltas: asyncio.Queue[str] = asyncio.Queue()
    redactor = StreamRedactor(backend.extra_secrets())

    def on_delta(piece: str) -> None:  # called from the turn's worker thread
        loop.call_soon_threadsafe(deltas.put_nowait, piece)

    turn = chat_turn.start(on_delta)
    yield writer.opening()
    while not turn.done():
        getter = asyncio.ensure_future(deltas.get())
        try:
            done, _ = await asyncio.wait(
                {getter, turn}, timeout=KEEPALIVE_SECONDS, return_when=asyncio.FIRST_COMPLETED
            )
        finally:  # also when the client hangs up while we wait
            if not getter.done():
                getter.cancel()
        if getter in done:
            out = redactor.feed(getter.result())
            if out:
                yield writer.content(out)
        elif not done:
            yield writer.keepalive()
    while not deltas.empty():  # deltas that arrived after the last wait: send them too
        out = redactor.feed(deltas.get_nowait())
        if out:
            yield writer.content(out)
    result = turn.result()
    failure = result_error(result, backend.redact)
    if failure is not None:
        rest = redactor.flush()
        if rest:
            yield writer.content(rest)
        yield writer.error(failure)
        yield writer.done()
        return
    rest = redactor.flush() + _missing_tail(redactor, result.text, backend.extra_secrets())
    if rest:
        yield writer.content(rest)
    yield writer.closing(result.exit_reason)
    if writer.include_usage:
        yield writer.usage(usage_from(result.usage))
    yield writer.done()


def _missing_tail(redactor: StreamRedactor, final: str, extra: tuple[str, ...]) -> str:
    """Reply text the deltas did not carry: a slash command's output, a note or failure
    sentence the runner appended, or everything when the runner did not stream. The
    deltas may also hold text the model wrote before its tool calls, so the final reply
    is expected at their end. Compared after redaction and outer whitespace, since the
    runner redacts and strips the reply it returns."""
    from herald.safety import redact

    done = redact(redactor.raw, extra_secrets=extra).rstrip()
    reply = redact(final, extra_secrets=extra).strip()
    if not reply or done.endswith(reply):
        return ""
    if not done:
        return reply
    if reply.startswith(done):
        return reply[len(done) :]
    return "\n\n" + reply
