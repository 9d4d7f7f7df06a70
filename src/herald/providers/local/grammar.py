"""The reply protocol that gives a tool-less model tool use, and the grammar that
enforces it.

The model must answer with exactly one JSON object, either
``{"tool": <an offered name>, "arguments": {...}}`` or ``{"answer": "..."}``.
`reply_schema` writes that as a JSON schema: one ``anyOf`` branch per offered
tool (its ``arguments`` constrained by the tool's own parameter schema) plus the
answer branch. When the caller forces a tool (``tool_choice`` "required" or a
named function) the answer branch, and every other tool's branch, is left out.
llama.cpp's server constrains sampling to the schema (xllamacpp routes it
through LLGuidance) and masks every token that would leave it, so even a 135M
model cannot emit anything else.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from herald.providers.base import ProviderError

ToolChoiceMode = Literal["auto", "none", "required"]

_GENERIC_ARGUMENTS: dict[str, Any] = {"type": "object"}
ANSWER_BRANCH: dict[str, Any] = {
    "type": "object",
    "properties": {"answer": {"type": "string", "minLength": 1}},
    "required": ["answer"],
    "additionalProperties": False,
}


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True)
class ToolChoice:
    mode: ToolChoiceMode = "auto"
    name: str | None = None  # the one tool allowed, when mode == "required"

    @property
    def forced(self) -> bool:
        return self.mode == "required"

    def to_json(self) -> dict[str, Any]:
        return {"mode": self.mode, "name": self.name}


def _invalid_request(message: str) -> ProviderError:
    return ProviderError(message, provider="local", error_type="invalid_request_error")


def parse_tools(tools: list[dict[str, Any]] | None) -> list[ToolSpec]:
    """OpenAI function-format tools as `ToolSpec`s (other tool types are refused)."""
    specs: list[ToolSpec] = []
    for index, tool in enumerate(tools or []):
        fn = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(fn, dict) or tool.get("type", "function") != "function":
            raise _invalid_request(
                f"tools[{index}] is not an OpenAI function tool: the local model only "
                "supports {'type': 'function', 'function': {...}}"
            )
        name = fn.get("name")
        if not isinstance(name, str) or not name:
            raise _invalid_request(f"tools[{index}] has no function name")
        params = fn.get("parameters")
        if not isinstance(params, dict) or params.get("type", "object") != "object":
            params = dict(_GENERIC_ARGUMENTS)
        specs.append(ToolSpec(name, str(fn.get("description") or ""), params))
    return specs


def parse_tool_choice(raw: Any, names: list[str]) -> ToolChoice:
    """OpenAI-style ``tool_choice``: None/"auto", "none", "required", or
    ``{"type": "function", "function": {"name": X}}``."""
    if raw is None or raw == "auto":
        return ToolChoice("auto")
    if raw == "none":
        return ToolChoice("none")
    if raw in ("required", "any"):
        if not names:
            raise _invalid_request("tool_choice is 'required' but no tools were offered")
        return ToolChoice("required")
    if isinstance(raw, dict):
        fn = raw.get("function") if isinstance(raw.get("function"), dict) else raw
        name = fn.get("name")
        if isinstance(name, str):
            if name not in names:
                offered = ", ".join(names) or "none"
                raise _invalid_request(
                    f"tool_choice names {name!r}, which is not among the offered tools ({offered})"
                )
            return ToolChoice("required", name)
    raise _invalid_request(
        f"unsupported tool_choice {raw!r}: use 'auto', 'none', 'required' or "
        "{'type': 'function', 'function': {'name': ...}}"
    )


def _tool_branch(spec: ToolSpec, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"tool": {"const": spec.name}, "arguments": arguments},
        "required": ["tool", "arguments"],
        "additionalProperties": False,
    }


def reply_schema(
    tools: list[ToolSpec], choice: ToolChoice, *, loose: frozenset[str] = frozenset()
) -> dict[str, Any] | None:
    """The JSON schema of an allowed reply; None when no tool may be called (then
    the model answers in plain text, without a grammar). Tools named in `loose`
    get ``arguments: {"type": "object"}`` instead of their own schema."""
    if choice.mode == "none" or not tools:
        return None
    allowed = [t for t in tools if choice.name is None or t.name == choice.name]
    branches = [
        _tool_branch(t, _GENERIC_ARGUMENTS if t.name in loose else t.parameters) for t in allowed
    ]
    if not choice.forced:
        branches.append(ANSWER_BRANCH)
    return branches[0] if len(branches) == 1 else {"anyOf": branches}


def all_loose(tools: list[ToolSpec]) -> frozenset[str]:
    """Every tool's name: the `loose` set to fall back on when llama.cpp refuses a
    tool's own parameter schema (its arguments are then only held to "a JSON
    object"; everything else about the protocol is still enforced)."""
    return frozenset(t.name for t in tools)


def answer_only_schema() -> dict[str, Any]:
    """The schema admitting only ``{"answer": "..."}`` (used when the model repeats a
    tool call whose result it has just been given)."""
    return dict(ANSWER_BRANCH)
