"""What the parent gets back for one child: a `ChildReport`, built from the child's
`TurnResult` and its stored transcript.

A child that timed out or was stopped still did work; its report carries that
work summarised from the transcript (what the model last said, the tool calls it
made with a preview of each result, the files it wrote) instead of throwing it
away. Everything shown is redacted.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from herald.safety import redact
from herald.tools import ERROR_PREFIX

MAX_FINAL_CHARS = 6_000
MAX_STEPS_SHOWN = 12
PREVIEW_CHARS = 200


@dataclass
class ChildReport:
    child_id: str
    goal: str
    status: str  # done | timed_out | stopped | interrupted | failed | not_started
    exit_reason: str
    final_text: str = ""
    files_written: list[str] = field(default_factory=list)
    tool_calls: list[str] = field(default_factory=list)  # tool names, in call order
    iterations: int = 0
    cost_usd: float | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    session_id: str | None = None
    error: str | None = None
    partial_work: str | None = None  # set when the child did not finish

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        return {k: v for k, v in data.items() if v not in (None, "") or k == "final_text"}


@dataclass(frozen=True)
class Step:
    name: str
    arguments: dict[str, Any]
    result: str | None


def transcript_steps(messages: list[Any]) -> tuple[list[Step], str]:
    """The tool calls in a child's stored messages (with their results) and the last
    assistant text."""
    results: dict[str, str] = {}
    for message in messages:
        if message.role == "tool" and message.tool_call_id:
            results[message.tool_call_id] = message.content or ""
    steps: list[Step] = []
    last_text = ""
    for message in messages:
        if message.role != "assistant":
            continue
        if message.content and str(message.content).strip():
            last_text = str(message.content).strip()
        for call in message.tool_calls or []:
            function = call.get("function", {})
            try:
                arguments = json.loads(function.get("arguments") or "{}")
            except (TypeError, ValueError):
                arguments = {}
            steps.append(
                Step(
                    str(function.get("name", "?")),
                    arguments if isinstance(arguments, dict) else {},
                    results.get(call.get("id", "")),
                )
            )
    return steps, last_text


def files_written(steps: list[Step], registry: Any) -> list[str]:
    """Paths the child's successful writing tools were given (the tool specs' ``writes``)."""
    out: list[str] = []
    for step in steps:
        spec = registry.get(step.name) if registry is not None else None
        if spec is None or not spec.writes or step.result is None:
            continue
        if step.result.startswith(ERROR_PREFIX):
            continue
        for argument in spec.writes:
            value = step.arguments.get(argument)
            if isinstance(value, str) and value and value not in out:
                out.append(value)
    return out


def summarise_partial(steps: list[Step], last_text: str, why: str) -> str:
    """The work of a child that did not finish, for the parent to build on."""
    lines = [f"The sub-agent did not finish ({why}). What it had done:"]
    if last_text:
        lines.append(f"Its last message: {_clip(last_text, 1500)}")
    if not steps:
        lines.append("It had not run any tool yet.")
    shown = steps[-MAX_STEPS_SHOWN:]
    if len(steps) > len(shown):
        lines.append(f"({len(steps) - len(shown)} earlier tool calls not shown)")
    for step in shown:
        args = _clip(json.dumps(step.arguments, ensure_ascii=False), 160)
        if step.result is None:
            outcome = "no result (stopped while it ran)"
        else:
            outcome = _clip(" ".join(step.result.split()), PREVIEW_CHARS)
        lines.append(f"- {step.name} {args} → {outcome}")
    return redact("\n".join(lines))


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def clip_final(text: str) -> str:
    return redact(_clip(text.strip(), MAX_FINAL_CHARS))


__all__ = [
    "ChildReport",
    "Step",
    "clip_final",
    "files_written",
    "summarise_partial",
    "transcript_steps",
]
