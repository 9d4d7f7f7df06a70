"""OpenAI-shaped chat messages → an Anthropic messages request body.

- system messages become the top-level ``system`` (text blocks, verbatim);
- assistant tool calls become ``tool_use`` blocks (arguments parsed; invalid
  JSON is kept as ``{"_raw": text}`` so nothing is lost);
- tool results become ``tool_result`` blocks inside a user message, placed
  before any text there (the API requires it);
- consecutive same-role messages are merged so roles alternate;
- prompt-cache breakpoints (``cache_control: ephemeral``) go on the last system
  block and on the last block of the last two user turns (3 of the 4 allowed);
- reasoning from earlier turns is dropped: passing thinking back requires the
  provider's signature, which the neutral message shape does not carry.

The caller's messages are never mutated.
"""

from __future__ import annotations

import json
import re
from typing import Any

EPHEMERAL = {"type": "ephemeral"}
USER_CACHE_BREAKPOINTS = 2
DEFAULT_MAX_TOKENS = 4096
EMPTY_USER_TEXT = "(empty message)"
CONVERSATION_START = "(conversation start)"

_DATA_URL = re.compile(r"^data:(?P<media>[\w/+.-]+);base64,(?P<data>.+)$", re.DOTALL)


def parse_tool_input(arguments: Any) -> dict[str, Any]:
    if isinstance(arguments, dict):
        return arguments
    if not isinstance(arguments, str) or not arguments.strip():
        return {}
    try:
        parsed = json.loads(arguments)
    except ValueError:
        return {"_raw": arguments}
    return parsed if isinstance(parsed, dict) else {"_raw": arguments}


def _text_block(text: str, *, verbatim: bool = False) -> dict[str, Any] | None:
    """A text block, trailing whitespace trimmed (the API rejects it at the end of
    an assistant turn) unless `verbatim`; None for blank text (also rejected)."""
    if not text.strip():
        return None
    return {"type": "text", "text": text if verbatim else text.rstrip()}


def _image_block(part: dict[str, Any]) -> dict[str, Any] | None:
    image = part.get("image_url")
    url = image.get("url") if isinstance(image, dict) else image
    if not isinstance(url, str) or not url:
        return None
    match = _DATA_URL.match(url)
    if match:
        return {
            "type": "image",
            "source": {"type": "base64", "media_type": match["media"], "data": match["data"]},
        }
    return {"type": "image", "source": {"type": "url", "url": url}}


def content_blocks(content: Any, *, verbatim: bool = False) -> list[dict[str, Any]]:
    """Anthropic content blocks for an OpenAI ``content`` (string or parts)."""
    if content is None:
        return []
    if isinstance(content, str):
        block = _text_block(content, verbatim=verbatim)
        return [block] if block else []
    blocks: list[dict[str, Any]] = []
    if isinstance(content, list):
        for part in content:
            if isinstance(part, str):
                block = _text_block(part)
            elif isinstance(part, dict) and part.get("type") in ("text", "input_text"):
                block = _text_block(str(part.get("text", "")), verbatim=verbatim)
            elif isinstance(part, dict) and part.get("type") == "image_url":
                block = _image_block(part)
            elif isinstance(part, dict) and part.get("type") in ("image", "document"):
                block = dict(part)  # already Anthropic-shaped
            else:
                block = _text_block(json.dumps(part, ensure_ascii=False))
            if block:
                blocks.append(block)
        return blocks
    block = _text_block(str(content))
    return [block] if block else []


def _tool_result_content(content: Any) -> str | list[dict[str, Any]]:
    if isinstance(content, str):
        return content.rstrip()
    blocks = content_blocks(content)
    return blocks if blocks else ""


def _convert_one(message: dict[str, Any]) -> tuple[str, list[dict[str, Any]]] | None:
    role = message.get("role")
    if role == "tool":
        return "user", [
            {
                "type": "tool_result",
                "tool_use_id": message.get("tool_call_id", ""),
                "content": _tool_result_content(message.get("content")),
            }
        ]
    if role == "assistant":
        blocks = content_blocks(message.get("content"))
        for call in message.get("tool_calls") or []:
            fn = call.get("function") or {}
            blocks.append(
                {
                    "type": "tool_use",
                    "id": call.get("id", ""),
                    "name": fn.get("name", ""),
                    "input": parse_tool_input(fn.get("arguments", "")),
                }
            )
        return ("assistant", blocks) if blocks else None
    # user (and any unknown role, treated as the user speaking)
    return "user", content_blocks(message.get("content")) or [
        {"type": "text", "text": EMPTY_USER_TEXT}
    ]


def convert_messages(
    messages: list[dict[str, Any]],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(system blocks, alternating messages) without cache breakpoints."""
    system: list[dict[str, Any]] = []
    turns: list[dict[str, Any]] = []
    for message in messages:
        if message.get("role") in ("system", "developer"):
            # verbatim: the system prompt is frozen bytes for the session
            system.extend(content_blocks(message.get("content"), verbatim=True))
            continue
        converted = _convert_one(message)
        if converted is None:
            continue  # an assistant message with nothing in it
        role, blocks = converted
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": list(blocks)})
    for turn in turns:
        if turn["role"] == "user":
            # tool_result blocks must open the user message that carries them
            results = [b for b in turn["content"] if b.get("type") == "tool_result"]
            if results:
                others = [b for b in turn["content"] if b.get("type") != "tool_result"]
                turn["content"] = results + others
    if turns and turns[0]["role"] != "user":
        turns.insert(0, {"role": "user", "content": [{"type": "text", "text": CONVERSATION_START}]})
    return system, turns


def add_cache_breakpoints(system: list[dict[str, Any]], turns: list[dict[str, Any]]) -> None:
    """Mark the system prompt and the last two user turns as cache breakpoints."""
    if system:
        system[-1] = {**system[-1], "cache_control": EPHEMERAL}
    marked = 0
    for turn in reversed(turns):
        if marked >= USER_CACHE_BREAKPOINTS:
            break
        if turn["role"] == "user" and turn["content"]:
            turn["content"][-1] = {**turn["content"][-1], "cache_control": EPHEMERAL}
            marked += 1


def convert_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    converted = []
    for tool in tools:
        fn = tool.get("function") if tool.get("type") == "function" else None
        if fn is None:
            converted.append(tool)  # already Anthropic-shaped (or a server tool)
            continue
        entry: dict[str, Any] = {
            "name": fn["name"],
            "input_schema": fn.get("parameters") or {"type": "object", "properties": {}},
        }
        if fn.get("description"):
            entry["description"] = fn["description"]
        converted.append(entry)
    return converted
