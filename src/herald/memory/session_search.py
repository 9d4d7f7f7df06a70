"""The `session_search` tool: find, read and scroll past conversations.

One tool, four shapes chosen by the arguments:

- `query` → discovery: full-text search over every stored message (archived
  ones too). Every term must match first; when that finds too few
  conversations, any term (with prefixes) and, for CJK/Thai text, trigram
  matches fill in. Hits are grouped by session lineage (sessions linked by
  `parent_id` are one conversation), one result per conversation, and the best
  hit is expanded with the messages around it.
- `session_id` + `around_message_id` → scroll: a window of messages around one
  (`around_message_id` alone works too; the session is looked up).
- `session_id` → read: the session's first and last messages, with a note of
  what lies between.
- nothing → browse: recent conversations with titles, dates and message counts.

No model is called and only real stored messages are returned. The current
session is left out (its messages are already in the model's context). Any
query text is safe: it is never parsed as FTS5 syntax (see
`herald.state.search`). Results are compact JSON, bounded per message and in
total.
"""

from __future__ import annotations

import time
import unicodedata
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import BeforeValidator

import herald.memory.hybrid as hybrid
from herald.config.schema_memory import SessionSearchConfig
from herald.memory.session_view import Budget, clip_text, compact, message_view, session_view
from herald.safety.provenance import merge_untrusted
from herald.tools.declare import tool
from herald.tools.registry import (
    ToolArgumentError,
    ToolContext,
    ToolRegistry,
    ToolResult,
    ToolSpec,
)

MAX_QUERY_CHARS = 2_000  # terms past this add nothing (the search keeps 32 at most)
FETCH_HITS = 120
MAX_CONVERSATIONS = 20
SCROLL_DEFAULT, SCROLL_MAX = 20, 100
READ_DEFAULT, READ_MAX = 40, 200
BROWSE_MAX = 50
SNIPPET_CHARS = 400
MORE_MATCHES = 3  # further hits shown per conversation, snippet only
MORE_CHARS = 200
# A further hit is listed under its conversation only when it is among the best this
# many overall: a weak hit that happens to share a session would otherwise be read
# before the next conversation's best one.
MORE_MATCHES_WITHIN = 20


def _settings(ctx: ToolContext) -> SessionSearchConfig:
    if ctx.config is not None:
        return ctx.config.memory.session_search
    return SessionSearchConfig()


def _limit(value: int | None, default: int, maximum: int) -> int:
    return default if value is None else max(1, min(maximum, value))


def _lenient_limit(raw: object) -> int | None:
    """Any limit the model sends is usable: a number is truncated (then clamped by the
    shape), anything else means the default."""
    try:
        return int(raw)  # type: ignore[call-overload]
    except (TypeError, ValueError, OverflowError):
        return None


def _blank_is_none(raw: object) -> object:
    """An empty string is an argument not given (models send "" for unused ones)."""
    return None if raw == "" else raw


def _printable(text: str) -> str:
    """Control characters (NUL ends an FTS5 string early) become spaces."""
    return "".join(" " if unicodedata.category(ch) == "Cc" else ch for ch in text)


class SessionSearch:
    """The four shapes over one store, leaving out `current_session_id`. With
    `identity`, every shape sees only that identity's conversations: another's session
    is reported as unknown, exactly like one that does not exist (DESIGN invariant 19)."""

    def __init__(
        self,
        store: Any,
        current_session_id: str | None = None,
        settings: SessionSearchConfig | None = None,
        identity: str | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.clock = clock  # "now" for time words in queries ("last summer")
        self.store = store
        self.current = current_session_id
        self.settings = settings or SessionSearchConfig()
        self.identity = identity
        # The provenance of every stored message a result shows: a past session's web
        # page is as untrusted in this session as it was in that one (invariant 18).
        self.provenances: list[str] = []

    def _saw(self, messages: Any) -> None:
        self.provenances.extend(getattr(m, "provenance", "trusted") for m in messages)

    # -- dispatch --------------------------------------------------------------------------

    def run(
        self,
        query: str | None = None,
        session_id: str | None = None,
        around_message_id: int | None = None,
        limit: int | None = None,
    ) -> dict[str, Any]:
        """The shape the arguments choose (see the module docstring)."""
        sid = (session_id or "").strip() or None
        if query and query.strip():
            return self.discover(query, sid, limit)
        if around_message_id is not None:
            return self.scroll(sid, around_message_id, limit)
        if sid:
            return self.read(sid, limit)
        return self.browse(limit)

    def _resolve(self, session_id: str) -> str:
        try:
            sid = self.store.resolve_session_id(session_id)
        except Exception as exc:  # StateError: unknown or ambiguous prefix
            raise ToolArgumentError(
                f"{exc}. Call session_search with no arguments to list recent sessions."
            ) from None
        if self.identity is not None and not self._owned(sid):
            raise ToolArgumentError(
                f"no session id starts with {session_id.strip()!r} or ends with it. Call "
                "session_search with no arguments to list recent sessions."
            )
        if sid == self.current:
            raise ToolArgumentError(
                f"{sid} is the current session: its messages are already in your context. "
                "session_search reads other sessions."
            )
        return sid

    def _owned(self, session_id: str) -> bool:
        found = self.store.summarize_sessions([session_id])
        return bool(found) and getattr(found[0].session, "identity", None) == self.identity

    def _summaries(self, session_ids: list[str]) -> dict[str, Any]:
        return {s.session.id: s for s in self.store.summarize_sessions(session_ids)}

    # -- discovery ---------------------------------------------------------------------------

    def discover(self, query: str, session_id: str | None, limit: int | None) -> dict[str, Any]:
        limit = _limit(limit, self.settings.default_limit, MAX_CONVERSATIONS)
        query = _printable(query[:MAX_QUERY_CHARS])
        scope = self._resolve(session_id) if session_id else None
        hits = hybrid.rank_messages(
            self.store,
            query,
            limit=FETCH_HITS,
            identity=self.identity,
            session_id=scope,
            exclude_session_id=self.current,
            use_vectors=self.settings.semantic,
            clock=self.clock,
        )
        strict = {hit.message_id for hit in hits if hit.strict}
        groups = self._group(hits, strict)
        shown = groups[:limit]
        out: dict[str, Any] = {"mode": "search", "query": clip_text(query, 200), "results": []}
        if not shown:
            out["note"] = (
                "no stored message matches; try other or fewer words, or call session_search "
                "with no arguments to browse recent conversations"
            )
            return out
        summaries = self._summaries([group["hit"].session_id for group in shown])
        budget = Budget(self.settings.max_result_chars - 600)
        for rank, group in enumerate(shown):
            result = self._result(group, summaries, expand=rank == 0)
            if group["hit"].message_id not in strict:
                result["partial_match"] = True  # found by some of the words, not all
            if budget.take(result):
                out["results"].append(result)
        if len(groups) > limit:
            out["more_conversations"] = len(groups) - limit
        out["note"] = budget.note() or (
            "scroll around a hit with session_id + around_message_id; read a whole session "
            "with session_id"
        )
        return out

    def _group(self, hits: list[Any], strict: set[int] | None = None) -> list[dict[str, Any]]:
        """Hits grouped by lineage, best group first; in each group the best hit (a tie
        within one search stage goes to the newest session, where copied content lives)."""
        strict = strict or set()
        lineages = self.store.session_lineages([hit.session_id for hit in hits])
        groups: dict[str, dict[str, Any]] = {}
        for order, hit in enumerate(hits):
            lineage = lineages.get(hit.session_id)
            key = lineage.root_id if lineage is not None else hit.session_id
            group = groups.get(key)
            if group is None:
                groups[key] = {
                    "hit": hit,
                    "order": order,
                    "count": 1,
                    "lineage": lineage,
                    "more": [],
                }
                continue
            group["count"] += 1
            if len(group["more"]) < MORE_MATCHES and order < MORE_MATCHES_WITHIN:
                group["more"].append(hit)
            best = group["hit"]
            same_stage = (hit.message_id in strict) == (best.message_id in strict)
            if same_stage and hit.rank == best.rank and lineage is not None:
                members = lineage.session_ids
                if members.index(hit.session_id) > members.index(best.session_id):
                    group["hit"] = hit
                    more = group["more"]
                    if any(h is hit for h in more):
                        group["more"] = [best if h is hit else h for h in more]
                    else:  # `hit` was past the listing cut-off: `best` still is listed
                        group["more"] = [best, *more][:MORE_MATCHES]
        return sorted(groups.values(), key=lambda g: g["order"])

    def _result(
        self, group: dict[str, Any], summaries: dict[str, Any], *, expand: bool
    ) -> dict[str, Any]:
        hit = group["hit"]
        lineage = group["lineage"]
        shown = self.store.get_message(hit.message_id)
        if shown is not None:
            self._saw([shown])
        latest = lineage.latest_id if lineage is not None else None
        if latest == self.current and lineage is not None:
            others = [sid for sid in lineage.session_ids if sid != self.current]
            latest = others[-1] if others else None
        summary = summaries.get(hit.session_id)
        result: dict[str, Any] = (
            session_view(summary, latest_id=latest)
            if summary is not None
            else {"session_id": hit.session_id}
        )
        result["matching_messages"] = group["count"]
        result["match"] = {
            "id": hit.message_id,
            "role": hit.role,
            "snippet": clip_text(hit.snippet, SNIPPET_CHARS),
        }
        if hit.active is False:
            result["match"]["archived"] = True
        if group["more"]:
            result["more_matches"] = [
                {"id": h.message_id, "role": h.role, "snippet": clip_text(h.snippet, MORE_CHARS)}
                for h in group["more"]
            ]
        if expand:
            around = self.settings.context_messages
            window = self.store.get_message_window(
                hit.session_id, hit.message_id, before=around, after=around
            )
            chars = self.settings.message_chars
            self._saw(window)
            result["context"] = [
                message_view(m, chars, match=m.id == hit.message_id) for m in window
            ]
        return result

    # -- scroll / read / browse -----------------------------------------------------------------

    def scroll(self, session_id: str | None, around: int, limit: int | None) -> dict[str, Any]:
        size = _limit(limit, SCROLL_DEFAULT, SCROLL_MAX)
        if session_id:
            sid = self._resolve(session_id)
        else:
            anchor = self.store.get_message(around)
            if anchor is None:
                raise ToolArgumentError(f"there is no message {around}")
            sid = self._resolve(anchor.session_id)
        before = (size - 1) // 2
        try:
            window = self.store.get_message_window(
                sid, around, before=before, after=size - 1 - before
            )
        except Exception as exc:  # StateError: the message is not in that session
            raise ToolArgumentError(f"{exc}; use a message id from that session") from None
        summary = self.store.summarize_sessions([sid])
        budget = Budget(self.settings.max_result_chars - 1_000)
        chars = self.settings.message_chars
        self._saw(window)
        messages = budget.keep([message_view(m, chars, match=m.id == around) for m in window])
        out: dict[str, Any] = {"mode": "scroll", "messages": messages}
        if summary:
            out["session"] = session_view(summary[0])
        if messages:
            out["note"] = budget.note() or (
                f"to scroll on, call again with around_message_id={messages[0]['id']} "
                f"(earlier) or {messages[-1]['id']} (later)"
            )
        return out

    def read(self, session_id: str, limit: int | None) -> dict[str, Any]:
        size = _limit(limit, READ_DEFAULT, READ_MAX)
        sid = self._resolve(session_id)
        head = (size + 1) // 2
        part = self.store.get_session_slice(sid, head=head, tail=size - head)
        self._saw([*part.head, *part.tail])
        summary = self.store.summarize_sessions([sid])
        chars = self.settings.message_chars
        budget = Budget(self.settings.max_result_chars - 1_000)
        first = budget.keep([message_view(m, chars) for m in part.head])
        last = list(reversed(budget.keep([message_view(m, chars) for m in reversed(part.tail)])))
        out: dict[str, Any] = {"mode": "read"}
        if summary:
            out["session"] = session_view(summary[0])
        out["messages"] = first + last
        hidden = part.total - len(first) - len(last)
        notes = [budget.note()] if budget.note() else []
        if hidden > 0:
            gap_after = first[-1]["id"] if first else None
            out["omitted"] = {"count": hidden, "after_id": gap_after}
            notes.append(
                f"{hidden} message(s) in the middle are not shown; scroll with "
                f"around_message_id (e.g. {gap_after}) or search with query"
            )
        if part.archived:
            notes.append(
                f"{part.archived} older message(s) were compressed into a summary; they are "
                "still found by query and shown by around_message_id"
            )
        if notes:
            out["note"] = " ".join(notes)
        return out

    def browse(self, limit: int | None) -> dict[str, Any]:
        count = _limit(limit, self.settings.default_limit * 2, BROWSE_MAX)
        exclude = [self.current] if self.current else []
        recent = self.store.recent_sessions(
            limit=count * 4, exclude=exclude, identity=self.identity
        )
        lineages = self.store.session_lineages([s.session.id for s in recent])
        seen: set[str] = set()
        rows: list[dict[str, Any]] = []
        for summary in recent:
            lineage = lineages.get(summary.session.id)
            key = lineage.root_id if lineage is not None else summary.session.id
            if key in seen:
                continue
            seen.add(key)
            view = session_view(summary)
            if lineage is not None and len(lineage.session_ids) > 1:
                view["sessions_in_conversation"] = len(lineage.session_ids)
            rows.append(view)
            if len(rows) == count:
                break
        budget = Budget(self.settings.max_result_chars - 600)
        out: dict[str, Any] = {"mode": "browse", "sessions": budget.keep(rows)}
        out["note"] = budget.note() or (
            "read one with session_id, or search all of them with query"
            if rows
            else "no earlier conversations are stored yet"
        )
        return out


@tool(toolset="core", parallel_safe=True, max_result_chars=60_000)
def session_search(
    ctx: ToolContext,
    query: str | None = None,
    session_id: str | None = None,
    around_message_id: Annotated[int | None, BeforeValidator(_blank_is_none)] = None,
    limit: Annotated[int | None, BeforeValidator(_lenient_limit)] = None,
) -> str | ToolResult:
    """Search and read past conversations (not the current one). query: find messages by
    words (returns the best-matching conversations, the best hit with the messages around
    it). session_id: read that session. session_id + around_message_id: scroll a window of
    messages around a message id. No arguments: list recent conversations. limit: how many
    conversations/messages to return.

    Args:
        query: words to look for
        session_id: a session id (or unique prefix)
        around_message_id: a message id from an earlier result, to scroll around
        limit: how many results to return
    """
    if ctx.store is None:
        raise ToolArgumentError("session search is unavailable: this agent has no session store")
    # Only the turn's own identity's conversations, the owner's included (invariant 19).
    search = SessionSearch(ctx.store, ctx.session_id, _settings(ctx), identity=ctx.identity)
    text = compact(search.run(query, session_id, around_message_id, limit))
    label = merge_untrusted(search.provenances)
    return ToolResult(text, provenance=label) if label is not None else text


# Declared once, as values; the composition root (herald.toolbox) adds them.
TOOLS: tuple[ToolSpec, ...] = (session_search,)


def register(target: ToolRegistry) -> None:
    """Add these tools to `target` (tests build small registries this way)."""
    target.add(*TOOLS)
