"""OpenAI-shaped messages rewritten for a small model whose chat template knows
only system, user and assistant turns.

SmolLM2 was never trained on a ``tool`` role and its template renders
``message['content']`` verbatim (a ``None`` content breaks it), so:

- assistant tool calls become the exact JSON the model itself emits under the
  reply grammar (``{"tool": ..., "arguments": {...}}``), so the history shows it
  its own protocol;
- tool results become user turns that start ``Tool result (<name>, <id>):``,
  which the template keeps and the model reads as ordinary text;
- consecutive turns of one role are merged (a tool result followed by the next
  user message is one user turn);
- when the chat ends with a tool result, it ends with "Answer the user with
  this result." (unless a tool call is forced): without it the model replies
  to every tool result by calling the same tool again;
- the tool list and the reply protocol go at the end of the system message,
  kept short because a 135M model loses track of long instructions.
"""

from __future__ import annotations

import json
from typing import Any

from herald.providers.local.grammar import ToolChoice, ToolSpec

_DESCRIPTION_CHARS = 120
_IMAGE_PLACEHOLDER = "[image omitted: the local model reads text only]"
ANSWER_NUDGE = "Answer the user with this result."


def content_text(content: Any) -> str:
    """Text of an OpenAI message content (a string, None, or a list of parts)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        pieces: list[str] = []
        for part in content:
            if isinstance(part, str):
                pieces.append(part)
            elif isinstance(part, dict):
                if part.get("type") in ("text", "input_text") and "text" in part:
                    pieces.append(str(part["text"]))
                elif part.get("type") in ("image_url", "input_image", "image"):
                    pieces.append(_IMAGE_PLACEHOLDER)
        return "\n".join(pieces)
    return str(content)


def tool_call_json(name: str, arguments: Any) -> str:
    """One tool call written the way the reply grammar makes the model write it."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError:
            pass  # keep the raw text: the model should see what it was given
    return json.dumps({"tool": name, "arguments": arguments}, ensure_ascii=False)


def answer_json(text: str) -> str:
    return json.dumps({"answer": text}, ensure_ascii=False)


def tool_result_text(name: str, call_id: str, content: str) -> str:
    return f"Tool result ({name}, {call_id}):\n{content}"


def _short_description(text: str) -> str:
    first = " ".join(text.split())
    for end in (". ", "\n"):
        if end in first:
            first = first.split(end, 1)[0].rstrip(".") + "."
            break
    if len(first) > _DESCRIPTION_CHARS:
        first = first[: _DESCRIPTION_CHARS - 3].rstrip() + "..."
    return first


def _type_name(schema: Any) -> str:
    if not isinstance(schema, dict):
        return "any"
    if "enum" in schema and isinstance(schema["enum"], list):
        return "|".join(json.dumps(v, ensure_ascii=False) for v in schema["enum"][:6])
    kind = schema.get("type", "any")
    if isinstance(kind, list):
        return "|".join(str(k) for k in kind)
    if kind == "array":
        return f"list of {_type_name(schema.get('items'))}"
    return str(kind)


def tool_signature(spec: ToolSpec) -> str:
    props = spec.parameters.get("properties")
    required = set(spec.parameters.get("required") or [])
    params = []
    if isinstance(props, dict):
        for key, sub in props.items():
            mark = "" if key in required else "?"
            params.append(f"{key}{mark}: {_type_name(sub)}")
    line = f"- {spec.name}({', '.join(params)})"
    description = _short_description(spec.description)
    return f"{line}: {description}" if description else line


def _example_arguments(spec: ToolSpec) -> str:
    props = spec.parameters.get("properties")
    required = spec.parameters.get("required") or []
    if not isinstance(props, dict):
        return "{}"
    keys = [k for k in props if k in required] or list(props)[:1]
    return "{" + ", ".join(f'"{k}": ...' for k in keys) + "}"


def protocol_instructions(tools: list[ToolSpec], choice: ToolChoice) -> str:
    """The tool list and reply protocol appended to the system message."""
    allowed = [t for t in tools if choice.name is None or t.name == choice.name]
    example = allowed[0] if allowed else tools[0]
    lines = ["Tools:"]
    lines.extend(tool_signature(t) for t in tools)
    lines.append("Reply with one JSON object only.")
    # Answer line first: with the tool line first, SmolLM2-135M calls a tool even
    # for "hi". The answer example must not be a fillable phrase ("your reply"):
    # the model copies it verbatim.
    if not choice.forced:
        lines.append('To reply to the user: {"answer": "<your reply>"}')
    lines.append(
        f'To use a tool: {{"tool": "{example.name}", "arguments": {_example_arguments(example)}}}'
    )
    if choice.forced:
        target = f"the tool {choice.name}" if choice.name else "one of the tools"
        lines.append(f"You must call {target} now.")
    lines.append('A user message starting with "Tool result" holds a tool\'s output; use it.')
    return "\n".join(lines)


def render_messages(
    messages: list[dict[str, Any]],
    tools: list[ToolSpec],
    choice: ToolChoice,
) -> list[dict[str, str]]:
    """The chat the model is given: only system/user/assistant roles, string
    contents, no empty turns, no two consecutive turns of one role."""
    protocol = bool(tools) and choice.mode != "none"
    system_parts: list[str] = []
    turns: list[tuple[str, str]] = []
    tool_names: dict[str, str] = {}

    for message in messages:
        role = message.get("role")
        text = content_text(message.get("content"))
        if role in ("system", "developer"):
            system_parts.append(text)
        elif role == "assistant":
            calls = message.get("tool_calls") or []
            if calls:
                rendered = []
                for call in calls:
                    fn = call.get("function") or {}
                    name = str(fn.get("name") or "")
                    tool_names[str(call.get("id") or "")] = name
                    rendered.append(tool_call_json(name, fn.get("arguments", {})))
                turns.append(("assistant", "\n".join(rendered)))
            elif text:
                turns.append(("assistant", answer_json(text) if protocol else text))
        elif role == "tool":
            call_id = str(message.get("tool_call_id") or "")
            name = str(message.get("name") or tool_names.get(call_id) or "tool")
            turns.append(("tool", tool_result_text(name, call_id, text)))
        else:  # user, and any role the template would not know
            turns.append(("user", text))

    if not choice.forced and turns and turns[-1][0] == "tool":
        # Without this nudge the model answers a tool result by calling the tool again.
        turns[-1] = ("tool", turns[-1][1] + "\n\n" + ANSWER_NUDGE)

    merged: list[dict[str, str]] = []
    for role, text in turns:
        if not text:
            continue
        role = "user" if role == "tool" else role  # the template has no tool role
        if merged and merged[-1]["role"] == role:
            merged[-1]["content"] += "\n\n" + text
        else:
            merged.append({"role": role, "content": text})

    system = "\n\n".join(part for part in system_parts if part.strip())
    if protocol:
        instructions = protocol_instructions(tools, choice)
        system = f"{system}\n\n{instructions}" if system else instructions
    return ([{"role": "system", "content": system}] if system else []) + merged


def canonical_call(name: str, arguments: Any) -> str:
    """A tool call as comparable text (argument key order and spacing ignored)."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError:
            return json.dumps([name, arguments])
    return json.dumps([name, arguments], sort_keys=True, ensure_ascii=False)


def answered_calls(messages: list[dict[str, Any]]) -> list[str]:
    """The calls of the last assistant message when the chat ends with their tool
    results (as `canonical_call` texts); [] otherwise."""
    index = len(messages)
    while index > 0 and messages[index - 1].get("role") == "tool":
        index -= 1
    if index == len(messages) or index == 0:
        return []
    last = messages[index - 1]
    if last.get("role") != "assistant":
        return []
    return [
        canonical_call(
            str((c.get("function") or {}).get("name") or ""),
            (c.get("function") or {}).get("arguments", {}),
        )
        for c in last.get("tool_calls") or []
    ]
