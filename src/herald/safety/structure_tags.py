"""`strip_structure_tags`: remove text that could pose as conversation
structure (role tags, tool-call markup, chat-template tokens) from untrusted
text such as a tool's error message, before the model reads it.

Covered: role and instruction tags (``<system>``, ``</ assistant>``,
``<instructions>``), tool-call markup (``<function_call>``, ``<result>``,
``<output>``, ``<tool_result>``, ``<invoke name=…>``, ``<parameter>``, with
any namespace prefix), chat-template tokens (``<|im_start|>``,
``<|eot_id|>``, ``<｜begin▁of▁sentence｜>``, ``[INST]``, ``<<SYS>>``,
``<start_of_turn>``), in any casing, with attributes, inner spaces or line
breaks, written with fullwidth or small-form brackets or as HTML entities
(``&lt;system&gt;``). Removal repeats until nothing changes, so
``<res<result>ult>`` cannot reassemble into a tag. Ordinary angle brackets
(``Vec<String>``, ``<class 'dict'>``, ``<div>``, ``x < 3``) stay.
"""

from __future__ import annotations

import re

# Look-alike brackets and bars folded to ASCII first.
_LOOKALIKES = str.maketrans({
    "\uff1c": "<", "\ufe64": "<", "\u2039": "<", "\u3008": "<", "\u27e8": "<",
    "\uff1e": ">", "\ufe65": ">", "\u203a": ">", "\u3009": ">", "\u27e9": ">",
    "\uff5c": "|", "\u01c0": "|", "\u2223": "|", "\uff3b": "[", "\uff3d": "]",
})  # fmt: skip
_OPEN = r"(?:<|&lt;|&#0*60;|&#x0*3c;)"
_CLOSE = r"(?:>|&gt;|&#0*62;|&#x0*3e;)"
_NAMES = (
    r"system|system_prompt|system-reminder|assistant|user|tool|tools|human|developer|im_start"
    r"|im_end|im_sep|instructions?|function_calls?|function_results?|function|result|results"
    r"|output|outputs|tool_results?|tool_use|tool_calls?|tool_response|tool_output|invoke"
    r"|parameters?|start_of_turn|end_of_turn|thinking|answer|message|bos|eos|endoftext"
)
_TAG_RE = re.compile(
    _OPEN + r"\s*/?\s*(?:[A-Za-z_][\w-]{0,30}:)?(?:" + _NAMES + r")(?![\w-])"
    r"(?:\s[^<>]{0,300}?)?\s*/?\s*" + _CLOSE,
    re.IGNORECASE,
)
_TOKEN_RE = re.compile(
    _OPEN + r"\s*\|[^|<>\n]{0,40}\|\s*" + _CLOSE + r"|\[\s*/?\s*INST\s*\]|<<\s*/?\s*SYS\s*>>",
    re.IGNORECASE,
)
_MAX_PASSES = 8


def strip_structure_tags(text: str) -> str:
    """text without anything that could pose as conversation structure."""
    if not text.isascii():
        text = text.translate(_LOOKALIKES)
    for _ in range(_MAX_PASSES):
        cleaned = _TOKEN_RE.sub("", _TAG_RE.sub("", text))
        if cleaned == text:
            break
        text = cleaned
    return text
