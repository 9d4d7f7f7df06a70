"""Config section `kanban`: where the task board lives, leases, and the dispatcher."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from herald.config.strict import StrictModel, renamed_key

DSN_REF_RE = re.compile(r"^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$")


class KanbanConfig(StrictModel):
    backend: Literal["sqlite", "postgres"] = Field(
        "sqlite",
        description="sqlite: a file in the home (one machine); postgres: a database shared "
        "by workers on several machines",
    )
    path: str | None = Field(
        None,
        description="the SQLite board file; relative paths are relative to the base home "
        "(default <base home>/kanban.db, shared by every profile)",
    )
    dsn: str = Field(
        "${KANBAN_DSN}",
        description="the PostgreSQL connection string as a ${SECRET} reference: put the DSN "
        "in .env (it holds a password), never in config.yaml",
    )
    lease_seconds: float = Field(
        300.0, gt=0, description="a claim lasts this long unless the worker heartbeats"
    )
    heartbeat_seconds: float | None = Field(
        None, gt=0, description="seconds between automatic heartbeats (default lease / 3)"
    )
    max_attempts: int = Field(
        3, ge=1, description="attempts a task gets before it is marked failed"
    )
    max_workers: int = Field(2, ge=1, description="workers one dispatcher runs at a time")
    poll_seconds: float = Field(5.0, gt=0, description="seconds between dispatcher rounds")
    host_name: str | None = Field(
        None, description="this machine's name on the board (default: the hostname)"
    )
    spawn_failures: int = Field(
        3, ge=1, description="consecutive spawn failures that open the circuit breaker"
    )
    breaker_seconds: float = Field(
        300.0, gt=0, description="seconds the dispatcher stops spawning once the breaker opens"
    )
    in_gateway: bool = Field(True, description="`herald gateway run` also runs the dispatcher")
    worker_max_iterations: int | None = Field(
        None, ge=1, description="model calls a worker may make (default agent.max_iterations)"
    )
    worker_max_cost_usd: float | None = Field(
        None,
        gt=0,
        description="what one attempt at a task may cost; a model call whose estimate would "
        "pass it is not made, and the task is blocked for a human instead of retried",
    )
    worker_allow: list[str] = Field(
        default_factory=list,
        description="command patterns (glob, e.g. 'make test') board workers may run "
        "unattended beyond the known read-only commands",
    )

    @model_validator(mode="before")
    @classmethod
    def _renamed_worker_max_turns(cls, data: Any) -> Any:
        return renamed_key(data, "worker_max_turns", "worker_max_iterations", "kanban")

    @field_validator("dsn")
    @classmethod
    def _dsn_is_a_reference(cls, value: str) -> str:
        if not DSN_REF_RE.match(value.strip()):
            raise ValueError(
                "a ${NAME} reference to a secret, not the DSN itself (it holds a password): "
                "put the postgresql:// URL in .env as KANBAN_DSN and set "
                "kanban.dsn: ${KANBAN_DSN}"
            )
        return value.strip()

    @model_validator(mode="after")
    def _heartbeat_inside_lease(self) -> KanbanConfig:
        if self.heartbeat_seconds is not None and self.heartbeat_seconds >= self.lease_seconds:
            raise ValueError(
                f"kanban.heartbeat_seconds ({self.heartbeat_seconds:g}) must be shorter than "
                f"kanban.lease_seconds ({self.lease_seconds:g}), or every lease would lapse"
            )
        return self

    @property
    def heartbeat_every(self) -> float:
        return self.heartbeat_seconds or self.lease_seconds / 3

    @property
    def dsn_secret(self) -> str:
        match = DSN_REF_RE.match(self.dsn)
        assert match is not None
        return match.group(1)
