"""Stop a turn that loops on tool calls going nowhere.

`GuardrailController` is pure bookkeeping for one turn. The engine feeds it
every tool result in call order and gets back a `GuardrailDecision`:

- the same call (tool + arguments) failing again and again;
- one tool failing again and again, whatever the arguments;
- the same read-only call returning the same result again with nothing in
  between that could have changed it (any successful call with side effects
  counts as progress and resets this count).

At a warn threshold the model is told (the engine appends the message to that
tool result); at a halt threshold the turn ends with `guardrail_halt` when
`hard_stop` is on, else the warning is repeated, sharper. `hard_stop` defaults
to on only for unattended surfaces, where no human would notice the loop.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Literal

from herald.config.schema_tools import GuardrailsConfig

GuardrailAction = Literal["ok", "warn", "halt"]
GUARDRAIL_HEADER = "[Herald guardrail]"
ATTENDED_SURFACES = frozenset({"cli", "tui"})


def is_unattended(surface: str, *, has_approver: bool = False) -> bool:
    """Gateway platforms, cron, webhooks and an API without an approver run with
    nobody watching; the terminal has a human at it."""
    if surface in ATTENDED_SURFACES:
        return False
    if surface == "api":
        return not has_approver
    return True


def resolve_hard_stop(config: GuardrailsConfig, surface: str, *, has_approver: bool) -> bool:
    if config.hard_stop is not None:
        return config.hard_stop
    return is_unattended(surface, has_approver=has_approver)


@dataclass(frozen=True)
class GuardrailDecision:
    action: GuardrailAction = "ok"
    message: str | None = None  # for the model (warn/halt) and the logs

    @property
    def halt(self) -> bool:
        return self.action == "halt"


OK = GuardrailDecision()


def call_key(name: str, arguments: str | dict[str, Any] | None) -> str:
    """Tool plus arguments, insensitive to key order and whitespace when they parse."""
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    try:
        text = json.dumps(json.loads(text or "{}"), sort_keys=True, separators=(",", ":"))
    except (TypeError, ValueError):
        pass
    return f"{name}\x00{text}"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()


@dataclass
class GuardrailController:
    config: GuardrailsConfig = field(default_factory=GuardrailsConfig)
    hard_stop: bool = False
    identical_failures: dict[str, int] = field(default_factory=dict)
    tool_failures: dict[str, int] = field(default_factory=dict)
    repeats: dict[tuple[str, str], int] = field(default_factory=dict)
    halted: GuardrailDecision | None = None

    def observe(
        self,
        name: str,
        arguments: str | dict[str, Any] | None,
        content: str,
        *,
        is_error: bool,
        read_only: bool,
    ) -> GuardrailDecision:
        """Record one result and say what to do about it."""
        if not self.config.enabled:
            return OK
        key = call_key(name, arguments)
        if is_error:
            same = self.identical_failures[key] = self.identical_failures.get(key, 0) + 1
            total = self.tool_failures[name] = self.tool_failures.get(name, 0) + 1
            decisions = [
                self._judge(
                    same,
                    self.config.identical_failure_warn,
                    self.config.identical_failure_halt,
                    f"{name} failed {same} times with the same arguments. Do not retry it "
                    "unchanged: read the error, change the arguments or take another approach.",
                ),
                self._judge(
                    total,
                    self.config.tool_failure_warn,
                    self.config.tool_failure_halt,
                    f"{name} failed {total} times in a row. Stop and reconsider: check the "
                    "inputs, use a different tool, or tell the user what is blocking you.",
                ),
            ]
            return self._worst(decisions)
        self.identical_failures.pop(key, None)
        self.tool_failures.pop(name, None)
        if not read_only:
            self.repeats.clear()  # a side effect may have changed what reads return
            return OK
        seen = (key, _digest(content))
        count = self.repeats[seen] = self.repeats.get(seen, 0) + 1
        return self._judge(
            count,
            self.config.no_progress_warn,
            self.config.no_progress_halt,
            f"{name} returned the same result {count} times for the same arguments; "
            "repeating it will not make progress. Use what you have or try something else.",
        )

    def _judge(self, count: int, warn: int, halt: int, text: str) -> GuardrailDecision:
        if count >= halt:
            if self.hard_stop:
                decision = GuardrailDecision(
                    "halt", f"{GUARDRAIL_HEADER} {text} Stopping the turn."
                )
                self.halted = self.halted or decision
                return decision
            return GuardrailDecision(
                "warn", f"{GUARDRAIL_HEADER} {text} This loop is not working; change course now."
            )
        if count >= warn:
            return GuardrailDecision("warn", f"{GUARDRAIL_HEADER} {text}")
        return OK

    @staticmethod
    def _worst(decisions: list[GuardrailDecision]) -> GuardrailDecision:
        rank = {"ok": 0, "warn": 1, "halt": 2}
        return max(decisions, key=lambda d: rank[d.action])


def attach_guardrail(tool_output: str, message: str) -> str:
    """The API copy of a tool result carrying a guardrail message."""
    return f"{tool_output}\n\n{message}"
