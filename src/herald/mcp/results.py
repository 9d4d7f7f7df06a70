"""What the model reads of an MCP tool result: text joined, everything else described.

Images, audio and resources are not pasted into the transcript (a base64 blob is
thousands of useless tokens); each becomes a short bracketed description. An
``isError`` result is handed back as a `ToolResult` error, so the registry
sanitizes it and marks it ``[TOOL_ERROR]`` like any tool error.
"""

from __future__ import annotations

import json
from typing import Any

from herald.tools import ToolResult


def _approx_bytes(b64: str) -> int:
    return len(b64) * 3 // 4


def describe_block(block: Any) -> str:
    """One content block as text."""
    kind = getattr(block, "type", None)
    if kind == "text":
        return block.text
    if kind in ("image", "audio"):
        return f"[{kind}: {block.mime_type}, about {_approx_bytes(block.data)} bytes, not shown]"
    if kind == "resource_link":
        label = block.name or block.uri
        mime = f", {block.mime_type}" if getattr(block, "mime_type", None) else ""
        return f"[resource link: {label} <{block.uri}>{mime}]"
    if kind == "resource":
        resource = block.resource
        text = getattr(resource, "text", None)
        if text is not None:
            return f"[resource {resource.uri}]\n{text}"
        blob = getattr(resource, "blob", "") or ""
        mime = getattr(resource, "mime_type", None) or "binary"
        return f"[resource {resource.uri}: {mime}, about {_approx_bytes(blob)} bytes, not shown]"
    return f"[{kind or 'unknown'} content, not shown]"


def result_text(result: Any) -> str:
    """The text of a CallToolResult: blocks joined; structured content when there is no text."""
    parts = [describe_block(block) for block in result.content or []]
    text = "\n".join(p for p in parts if p)
    if not text and result.structured_content is not None:
        text = json.dumps(result.structured_content, ensure_ascii=False, default=str)
    return text


def to_tool_result(result: Any) -> ToolResult | str:
    text = result_text(result)
    if result.is_error:
        return ToolResult(text or "the MCP tool reported an error without a message", True)
    return text if text else "(the tool returned no content)"
