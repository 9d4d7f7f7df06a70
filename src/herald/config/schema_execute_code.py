"""Config section for `execute_code` (`execute_code.*`): a short Python script that
calls Herald's tools, run in the session's environment."""

from __future__ import annotations

from pydantic import Field

from herald.config.strict import StrictModel

# The tools a script may call when the config does not say otherwise: the readers,
# the writers (each behind its own gate) and the terminal (behind the approval).
DEFAULT_SCRIPT_TOOLS = (
    "read_file",
    "write_file",
    "patch",
    "search_files",
    "terminal",
    "web_search",
    "web_extract",
)


class ExecuteCodeConfig(StrictModel):
    python: str = Field(
        "python3", description="the Python interpreter the script runs with, in the environment"
    )
    timeout_seconds: int = Field(
        120,
        ge=1,
        le=3600,
        description="seconds the script may run (time spent inside tool calls is not counted)",
    )
    max_output_chars: int = Field(
        20_000, ge=100, le=200_000, description="characters of printed output kept per run"
    )
    max_tool_calls: int = Field(
        50, ge=1, le=1000, description="tool calls one script may make; later ones fail"
    )
    tools: list[str] = Field(
        default_factory=lambda: list(DEFAULT_SCRIPT_TOOLS),
        description="tools a script may call (only those the turn also offers); never "
        "execute_code itself, delegate_task or clarify",
    )
