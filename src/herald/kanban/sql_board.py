"""`SqlBoard`: the board's logic in portable SQL; a backend supplies connections,
transactions and the few dialect differences (row locks, ids, placeholders).

Every operation is one short transaction. Status changes are read-check-write under
the backend's write lock (SQLite's BEGIN IMMEDIATE, PostgreSQL's row locks), so two
processes can never both move a task, and a lease-checked call compares the lease
token inside that transaction.
"""

from __future__ import annotations

import time
from abc import abstractmethod
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from uuid import uuid4

from herald.kanban.board import Board, token_of
from herald.kanban.model import (
    FINAL,
    HELD,
    Attachment,
    Claim,
    ClaimOwner,
    Comment,
    CycleError,
    InvalidTransition,
    KanbanError,
    Lease,
    LeaseLost,
    NewTask,
    Status,
    Task,
    TaskNotFound,
    is_owner,
    owner_only,
)
from herald.kanban.sql_schema import (
    ATTEMPT_OUTCOMES,
    HELD_SQL,
    LEASE_CLEARED,
    TASK_COLUMNS,
    Query,
    Row,
    plain,
    shortest_path,
    task_from_row,
)


class SqlBoard(Board):
    # Appended to a SELECT that picks a row to change (PostgreSQL: " FOR UPDATE").
    lock_row: str = ""
    # Appended to the SELECT that picks the task to claim.
    lock_claim: str = ""

    def __init__(self, *, max_attempts: int = 3, clock: Callable[[], float] = time.time):
        self.default_max_attempts = max_attempts
        self.clock = clock

    @abstractmethod
    def transaction(self, *, write: bool) -> AbstractContextManager[Query]:
        """One transaction; the query function takes SQL with ``?`` placeholders."""

    def serialize_links(self, q: Query) -> None:
        """Called before a link or parent change, so two concurrent changes cannot
        together close a cycle that each alone would not (SQLite's write lock already
        serializes them)."""

    # ---- tasks -------------------------------------------------------------------------

    def add(self, new: NewTask, *, author: str = "owner") -> Task:
        title = " ".join(new.title.split())
        if not title:
            raise KanbanError("a task needs a title: say in a few words what is to be done")
        max_attempts = new.max_attempts or self.default_max_attempts
        if max_attempts < 1:
            raise KanbanError("max_attempts must be at least 1")
        now = self.clock()
        with self.transaction(write=True) as q:
            if new.parent_id is not None:
                self._row(q, new.parent_id)
            for blocker in new.blocked_by:
                self._row(q, blocker)
            rows = q(
                "INSERT INTO kanban_tasks (title, body, priority, assignee, parent_id, "
                "created_at, updated_at, max_attempts) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
                "RETURNING id",
                (
                    title,
                    new.body,
                    new.priority,
                    new.assignee or "any",
                    new.parent_id,
                    now,
                    now,
                    max_attempts,
                ),
            )
            task_id = int(rows[0]["id"])
            for blocker in dict.fromkeys(new.blocked_by):  # a new task cannot be in a cycle
                q(
                    "INSERT INTO kanban_links (blocker_id, blocked_id) VALUES (?, ?)",
                    (blocker, task_id),
                )
            self._note(q, task_id, author, f"created by {author}", now)
        return self.show(task_id)

    def show(self, task_id: int) -> Task:
        with self.transaction(write=False) as q:
            row = self._row(q, task_id)
            blocks = q(
                "SELECT blocked_id FROM kanban_links WHERE blocker_id = ? ORDER BY 1", (task_id,)
            )
            blocked_by = q(
                "SELECT blocker_id FROM kanban_links WHERE blocked_id = ? ORDER BY 1", (task_id,)
            )
            children = q("SELECT id FROM kanban_tasks WHERE parent_id = ? ORDER BY id", (task_id,))
            comments = q(
                "SELECT id, task_id, author, body, created_at FROM kanban_comments "
                "WHERE task_id = ? ORDER BY id",
                (task_id,),
            )
            attachments = q(
                "SELECT id, task_id, kind, ref, note, created_at FROM kanban_attachments "
                "WHERE task_id = ? ORDER BY id",
                (task_id,),
            )
        return task_from_row(
            row,
            blocks=tuple(int(r["blocked_id"]) for r in blocks),
            blocked_by=tuple(int(r["blocker_id"]) for r in blocked_by),
            children=tuple(int(r["id"]) for r in children),
            comments=tuple(Comment(**plain(r)) for r in comments),
            attachments=tuple(Attachment(**plain(r)) for r in attachments),
        )

    def list(
        self, *, statuses: Iterable[Status] | None = None, assignee: str | None = None
    ) -> list[Task]:
        where, params = [], []
        if statuses is not None:
            wanted = [Status(s).value for s in statuses]
            if not wanted:
                return []
            where.append(f"status IN ({', '.join('?' for _ in wanted)})")
            params += wanted
        if assignee is not None:
            where.append("assignee = ?")
            params.append(assignee)
        clause = f" WHERE {' AND '.join(where)}" if where else ""
        with self.transaction(write=False) as q:
            rows = q(
                f"SELECT {TASK_COLUMNS} FROM kanban_tasks{clause} ORDER BY priority DESC, id",
                params,
            )
            links = q("SELECT blocker_id, blocked_id FROM kanban_links", ())
        blocked_by: dict[int, list[int]] = {}
        for link in links:
            blocked_by.setdefault(int(link["blocked_id"]), []).append(int(link["blocker_id"]))
        return [
            task_from_row(r, blocked_by=tuple(sorted(blocked_by.get(int(r["id"]), ()))))
            for r in rows
        ]

    def update(
        self,
        task_id: int,
        *,
        title: str | None = None,
        body: str | None = None,
        priority: int | None = None,
        assignee: str | None = None,
    ) -> Task:
        changes = {
            k: v
            for k, v in (
                ("title", title),
                ("body", body),
                ("priority", priority),
                ("assignee", assignee),
            )
            if v is not None
        }
        if "title" in changes and not " ".join(str(changes["title"]).split()):
            raise KanbanError("a task's title cannot be empty")
        with self.transaction(write=True) as q:
            self._row(q, task_id, lock=True)
            if changes:
                sets = ", ".join(f"{k} = ?" for k in changes)
                q(
                    f"UPDATE kanban_tasks SET {sets}, updated_at = ? WHERE id = ?",
                    (*changes.values(), self.clock(), task_id),
                )
        return self.show(task_id)

    def link(self, blocker_id: int, blocked_id: int) -> None:
        if blocker_id == blocked_id:
            raise CycleError(f"task {blocker_id} cannot block itself")
        with self.transaction(write=True) as q:
            self.serialize_links(q)
            self._row(q, blocker_id)
            self._row(q, blocked_id)
            edges: dict[int, list[int]] = {}
            for r in q("SELECT blocker_id, blocked_id FROM kanban_links", ()):
                edges.setdefault(int(r["blocker_id"]), []).append(int(r["blocked_id"]))
            path = shortest_path(edges, blocked_id, blocker_id)
            if path is not None:
                chain = " → ".join(str(t) for t in path)
                raise CycleError(
                    f"refused: task {blocked_id} already blocks task {blocker_id} ({chain}), so "
                    f"making {blocker_id} block {blocked_id} would be a dependency cycle that "
                    "could never start; remove one of those links first"
                )
            if blocked_id in edges.get(blocker_id, []):
                return
            q(
                "INSERT INTO kanban_links (blocker_id, blocked_id) VALUES (?, ?)",
                (blocker_id, blocked_id),
            )
            q("UPDATE kanban_tasks SET updated_at = ? WHERE id = ?", (self.clock(), blocked_id))

    def unlink(self, blocker_id: int, blocked_id: int) -> None:
        with self.transaction(write=True) as q:
            q(
                "DELETE FROM kanban_links WHERE blocker_id = ? AND blocked_id = ?",
                (blocker_id, blocked_id),
            )

    def set_parent(self, child_id: int, parent_id: int | None) -> None:
        with self.transaction(write=True) as q:
            self.serialize_links(q)
            self._row(q, child_id)
            if parent_id is not None:
                chain = [parent_id]
                current: int | None = parent_id
                while current is not None:
                    if current == child_id:
                        shown = " → ".join(str(t) for t in reversed(chain))
                        raise CycleError(
                            f"refused: task {parent_id} is task {child_id} or one of its "
                            f"descendants ({shown}); a task cannot be its own ancestor"
                        )
                    current = self._row(q, current)["parent_id"]
                    if current is not None:
                        chain.append(int(current))
            q(
                "UPDATE kanban_tasks SET parent_id = ?, updated_at = ? WHERE id = ?",
                (parent_id, self.clock(), child_id),
            )

    def comment(self, task_id: int, body: str, *, author: str) -> Comment:
        if not body.strip():
            raise KanbanError("a comment needs some text")
        now = self.clock()
        with self.transaction(write=True) as q:
            self._row(q, task_id)
            comment_id = self._note(q, task_id, author, body, now)
            q("UPDATE kanban_tasks SET updated_at = ? WHERE id = ?", (now, task_id))
        return Comment(comment_id, task_id, author, body, now)

    def attach(self, task_id: int, kind: str, ref: str, *, note: str = "") -> Attachment:
        if kind not in ("file", "url"):
            raise KanbanError(f"attachment kind must be file or url, not {kind!r}")
        now = self.clock()
        with self.transaction(write=True) as q:
            self._row(q, task_id)
            rows = q(
                "INSERT INTO kanban_attachments (task_id, kind, ref, note, created_at) "
                "VALUES (?, ?, ?, ?, ?) RETURNING id",
                (task_id, kind, ref, note, now),
            )
            q("UPDATE kanban_tasks SET updated_at = ? WHERE id = ?", (now, task_id))
        return Attachment(int(rows[0]["id"]), task_id, kind, ref, note, now)

    # ---- leases ------------------------------------------------------------------------

    def claim(
        self,
        owner: ClaimOwner,
        ttl: float,
        *,
        assignees: Iterable[str] | None = None,
        task_id: int | None = None,
    ) -> Lease | None:
        where, params = ["t.status = 'todo'"], []
        if assignees is not None:
            names = list(assignees)
            if not names:
                return None
            where.append(f"t.assignee IN ({', '.join('?' for _ in names)})")
            params += names
        if task_id is not None:
            where.append("t.id = ?")
            params.append(task_id)
        ready = (
            f"SELECT t.id FROM kanban_tasks t WHERE {' AND '.join(where)} AND NOT EXISTS ("
            "SELECT 1 FROM kanban_links l JOIN kanban_tasks b ON b.id = l.blocker_id "
            "WHERE l.blocked_id = t.id AND b.status <> 'done') "
            f"ORDER BY t.priority DESC, t.id LIMIT 1{self.lock_claim}"
        )
        token = uuid4().hex
        with self.transaction(write=True) as q:
            rows = q(ready, params)
            if not rows:
                return None
            chosen = int(rows[0]["id"])
            now = self.clock()
            expires = now + ttl
            q(
                "UPDATE kanban_tasks SET status = 'claimed', lease_token = ?, lease_owner = ?, "
                "lease_host = ?, lease_pid = ?, lease_expires_at = ?, updated_at = ? "
                "WHERE id = ?",
                (token, owner.name, owner.host, owner.pid, expires, now, chosen),
            )
            q(
                "INSERT INTO kanban_claims (task_id, token, owner, host, pid, claimed_at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (chosen, token, owner.name, owner.host, owner.pid, now),
            )
        return Lease(chosen, token, expires)

    def start(self, lease: Lease | str, *, session_id: str | None, pid: int | None) -> Task:
        token = token_of(lease)
        with self.transaction(write=True) as q:
            row = self._held(q, token)
            q(
                "UPDATE kanban_tasks SET status = 'in_progress', worker_session_id = ?, "
                "lease_pid = COALESCE(?, lease_pid), updated_at = ? WHERE id = ?",
                (session_id, pid, self.clock(), row["id"]),
            )
            if pid is not None:
                q("UPDATE kanban_claims SET pid = ? WHERE token = ?", (pid, token))
        return self.show(int(row["id"]))

    def heartbeat(self, lease: Lease | str, ttl: float) -> float:
        token = token_of(lease)
        now = self.clock()
        with self.transaction(write=True) as q:
            rows = q(
                f"UPDATE kanban_tasks SET lease_expires_at = ? WHERE lease_token = ? "
                f"AND status IN {HELD_SQL} RETURNING id",
                (now + ttl, token),
            )
            if not rows:
                raise LeaseLost(self._why_lost(q, token))
        return now + ttl

    def release(
        self, lease: Lease | str, reason: str, *, author: str, use_attempt: bool = True
    ) -> Task:
        token = token_of(lease)
        with self.transaction(write=True) as q:
            row = self._held(q, token)
            if use_attempt:
                self._end_attempt(q, row, "released", reason, author)
            else:
                now = self.clock()
                self._end_claim(q, token, "returned", reason, now)
                q(
                    f"UPDATE kanban_tasks SET status = 'todo', {LEASE_CLEARED}, updated_at = ? "
                    "WHERE id = ?",
                    (now, row["id"]),
                )
                self._note(q, int(row["id"]), author, f"{reason}. Back to todo", now)
        return self.show(int(row["id"]))

    def reclaim_expired(self) -> list[int]:
        done: list[int] = []
        with self.transaction(write=True) as q:
            rows = q(
                f"SELECT {TASK_COLUMNS} FROM kanban_tasks WHERE status IN {HELD_SQL} "
                f"AND lease_expires_at < ? ORDER BY id{self.lock_claim}",
                (self.clock(),),
            )
            for row in rows:
                where = f"{row['lease_owner']} on {row['lease_host']}"
                self._end_attempt(q, row, "expired", f"the lease of {where} expired", "board")
                done.append(int(row["id"]))
        return done

    def reclaim_dead(self, host: str, is_alive: Callable[[int], bool]) -> list[int]:
        with self.transaction(write=False) as q:
            rows = q(
                f"SELECT id, lease_token, lease_pid FROM kanban_tasks WHERE status IN {HELD_SQL}"
                " AND lease_host = ? AND lease_pid IS NOT NULL",
                (host,),
            )
        dead = [r for r in rows if not is_alive(int(r["lease_pid"]))]
        done: list[int] = []
        for r in dead:
            with self.transaction(write=True) as q:
                found = q(
                    f"SELECT {TASK_COLUMNS} FROM kanban_tasks WHERE id = ? AND lease_token = ? "
                    f"AND status IN {HELD_SQL}{self.lock_row}",
                    (r["id"], r["lease_token"]),
                )
                if not found:
                    continue  # it moved on meanwhile
                reason = f"worker process {r['lease_pid']} on {host} is gone"
                self._end_attempt(q, found[0], "dead", reason, "board")
                done.append(int(r["id"]))
        return done

    def claims(self, task_id: int | None = None) -> list[Claim]:
        clause, params = ("WHERE task_id = ? ", (task_id,)) if task_id is not None else ("", ())
        with self.transaction(write=False) as q:
            rows = q(
                "SELECT id, task_id, token, owner, host, pid, claimed_at, ended_at, outcome, reason "
                f"FROM kanban_claims {clause}ORDER BY id",
                params,
            )
        return [Claim(**plain(r)) for r in rows]

    # ---- outcomes ----------------------------------------------------------------------

    def complete(
        self,
        task_id: int,
        summary: str,
        *,
        lease: Lease | str | None = None,
        author: str,
        override: bool = False,
    ) -> Task:
        return self._finish(task_id, Status.DONE, summary, lease, author, override)

    def block(
        self,
        task_id: int,
        reason: str,
        *,
        lease: Lease | str | None = None,
        author: str,
        override: bool = False,
    ) -> Task:
        if not reason.strip():
            raise KanbanError("say why the task is blocked (what or whom it waits for)")
        return self._finish(task_id, Status.BLOCKED, reason, lease, author, override)

    def request_review(
        self, task_id: int, summary: str, *, lease: Lease | str | None = None, author: str
    ) -> Task:
        return self._finish(task_id, Status.REVIEW, summary, lease, author, False)

    def unblock(self, task_id: int, *, author: str, note: str = "") -> Task:
        return self._move(
            task_id, Status.BLOCKED, Status.TODO, author, note or "unblocked", "unblock"
        )

    def approve(self, task_id: int, *, author: str, note: str = "") -> Task:
        return self._move(
            task_id, Status.REVIEW, Status.DONE, author, note or "approved", "approve"
        )

    def reject(self, task_id: int, reason: str, *, author: str) -> Task:
        if not reason.strip():
            raise KanbanError("say what is wrong, so the next worker can fix it")
        return self._move(
            task_id, Status.REVIEW, Status.TODO, author, f"changes requested: {reason}", "reject"
        )

    def task_for_session(self, session_id: str) -> Task | None:
        with self.transaction(write=False) as q:
            rows = q(
                f"SELECT id FROM kanban_tasks WHERE worker_session_id = ? "
                f"AND status IN {HELD_SQL} ORDER BY updated_at DESC LIMIT 1",
                (session_id,),
            )
        return self.show(int(rows[0]["id"])) if rows else None

    # ---- the shared steps --------------------------------------------------------------

    def _finish(
        self,
        task_id: int,
        to: Status,
        text: str,
        lease: Lease | str | None,
        author: str,
        override: bool,
    ) -> Task:
        token = token_of(lease)
        with self.transaction(write=True) as q:
            row = self._row(q, task_id, lock=True)
            status = Status(row["status"])
            if status in FINAL:
                raise InvalidTransition(f"task {task_id} is already {status}; nothing to change")
            held = status in HELD
            if token is not None:
                if not held or row["lease_token"] != token:
                    raise LeaseLost(self._why_lost(q, token))
            elif not is_owner(author) and not held:  # no lease: only the owner moves it
                raise owner_only(task_id, status.value, author)
            elif held and not (override and is_owner(author)):
                raise InvalidTransition(
                    f"task {task_id} is being worked by {row['lease_owner']} on "
                    f"{row['lease_host']}; only that worker can move it now (the owner can "
                    "override)"
                )
            now = self.clock()
            result = text if to in (Status.DONE, Status.REVIEW) else row["result"]
            reason = text if to is Status.BLOCKED else None
            q(
                f"UPDATE kanban_tasks SET status = ?, result = ?, blocked_reason = ?, "
                f"{LEASE_CLEARED}, updated_at = ? WHERE id = ?",
                (to.value, result, reason, now, task_id),
            )
            if held:
                outcome = to.value if token is not None else f"overridden:{to.value}"
                self._end_claim(q, row["lease_token"], outcome, text, now)
            label = {Status.DONE: "done", Status.BLOCKED: "blocked", Status.REVIEW: "review"}[to]
            extra = " (the owner overrode the running worker)" if held and token is None else ""
            self._note(q, task_id, author, f"{label}{extra}: {text}", now)
        return self.show(task_id)

    def _move(
        self, task_id: int, frm: Status, to: Status, author: str, note: str, action: str
    ) -> Task:
        # approve, reject and unblock answer a question put to the owner
        if not is_owner(author):
            raise owner_only(task_id, frm.value, author)
        with self.transaction(write=True) as q:
            row = self._row(q, task_id, lock=True)
            if row["status"] != frm.value:
                wanted = "in review" if frm is Status.REVIEW else frm.value
                raise InvalidTransition(
                    f"task {task_id} is {row['status']}, not {wanted}; there is nothing to {action}"
                )
            now = self.clock()
            q(
                "UPDATE kanban_tasks SET status = ?, blocked_reason = NULL, updated_at = ? "
                "WHERE id = ?",
                (to.value, now, task_id),
            )
            self._note(q, task_id, author, note, now)
        return self.show(task_id)

    def _end_attempt(self, q: Query, row: Row, outcome: str, reason: str, author: str) -> None:
        task_id = int(row["id"])
        now = self.clock()
        self._end_claim(q, row["lease_token"], outcome, reason, now)
        attempts = int(row["attempts"]) + 1
        limit = int(row["max_attempts"])
        if attempts >= limit:
            reasons = q(
                "SELECT reason FROM kanban_claims WHERE task_id = ? AND outcome IN (?, ?, ?) "
                "ORDER BY id",
                (task_id, *ATTEMPT_OUTCOMES),
            )
            listed = "; ".join(f"{i}. {r['reason']}" for i, r in enumerate(reasons, start=1))
            result = f"failed after {attempts} attempts: {listed}"
            q(
                f"UPDATE kanban_tasks SET status = 'failed', attempts = ?, result = ?, "
                f"{LEASE_CLEARED}, updated_at = ? WHERE id = ?",
                (attempts, result, now, task_id),
            )
            self._note(
                q,
                task_id,
                author,
                f"attempt {attempts} of {limit} ended: {reason}. "
                f"No attempts left: the task failed ({result})",
                now,
            )
        else:
            q(
                f"UPDATE kanban_tasks SET status = 'todo', attempts = ?, {LEASE_CLEARED}, "
                "updated_at = ? WHERE id = ?",
                (attempts, now, task_id),
            )
            self._note(
                q,
                task_id,
                author,
                f"attempt {attempts} of {limit} ended: {reason}. Back to todo",
                now,
            )

    def _end_claim(
        self, q: Query, token: str | None, outcome: str, reason: str, now: float
    ) -> None:
        q(
            "UPDATE kanban_claims SET ended_at = ?, outcome = ?, reason = ? "
            "WHERE token = ? AND ended_at IS NULL",
            (now, outcome, reason, token),
        )

    def _note(self, q: Query, task_id: int, author: str, body: str, now: float) -> int:
        rows = q(
            "INSERT INTO kanban_comments (task_id, author, body, created_at) "
            "VALUES (?, ?, ?, ?) RETURNING id",
            (task_id, author, body, now),
        )
        return int(rows[0]["id"])

    def _row(self, q: Query, task_id: int, *, lock: bool = False) -> Row:
        suffix = self.lock_row if lock else ""
        rows = q(f"SELECT {TASK_COLUMNS} FROM kanban_tasks WHERE id = ?{suffix}", (task_id,))
        if not rows:
            raise TaskNotFound(f"no task {task_id} on the board (see `herald kanban list`)")
        return rows[0]

    def _held(self, q: Query, token: str | None) -> Row:
        rows = q(
            f"SELECT {TASK_COLUMNS} FROM kanban_tasks WHERE lease_token = ? "
            f"AND status IN {HELD_SQL}{self.lock_row}",
            (token,),
        )
        if not rows:
            raise LeaseLost(self._why_lost(q, token))
        return rows[0]

    def _why_lost(self, q: Query, token: str | None) -> str:
        rows = q("SELECT task_id, outcome, reason FROM kanban_claims WHERE token = ?", (token,))
        if not rows:
            return "this lease was never granted; claim the task first"
        r = rows[0]
        return (
            f"the lease on task {r['task_id']} is no longer held ({r['outcome']}: "
            f"{r['reason']}); stop working on it"
        )
