"""Config section ``trust``: the control/data defence (DESIGN invariant 18).

Content from outside (web pages, MCP results, other people's chat messages, webhook
payloads, files under ``untrusted_paths``, tools declared untrusted) may be read and
quoted, but a value taken from it cannot decide where a consequential action goes
without the owner (see herald.safety.taint).
"""

from __future__ import annotations

from pydantic import Field

from herald.config.strict import StrictModel


class TrustConfig(StrictModel):
    enforce: bool = Field(
        True,
        description="check consequential calls for control values taken from untrusted "
        "content; false turns the check off (for measuring only: provenance is still "
        "recorded and untrusted content still fenced)",
    )
    untrusted_paths: list[str] = Field(
        default_factory=list,
        description="globs of files whose contents are untrusted when read (for example "
        "~/Downloads/** or an inbox folder); ~ is the home directory",
    )
