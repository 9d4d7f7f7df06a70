"""Config section `context`: the system prompt's inputs, the context engine and compression."""

from __future__ import annotations

from pydantic import Field

from herald.config.strict import StrictModel


class PruneConfig(StrictModel):
    """Proactive pruning: tool output the model has read and that has left the tail is cut
    to one-line stubs (no model call), batched so the prompt cache breaks seldom and late.
    On a window whose compression threshold is small, the line is lowered to
    `above_fraction` of it, and the two token amounts below shrink in proportion."""

    enabled: bool = True
    above_tokens: int = Field(60_000, gt=0, description="prune when the prompt is above this")
    above_fraction: float = Field(
        0.5,
        gt=0,
        le=1,
        description="or above this share of the compression threshold, if that is lower",
    )
    min_reclaim_tokens: int = Field(8_000, gt=0, description="skip if it would save less")
    rearm_growth_tokens: int = Field(20_000, gt=0, description="growth before pruning again")


class ContextConfig(StrictModel):
    engine: str = Field("compressor", description="the active context engine")
    large_window_tokens: int = Field(512_000, gt=0, description="windows this big or more…")
    large_window_threshold: float = Field(0.5, gt=0, lt=1, description="…compress at this fraction")
    threshold: float = Field(0.4, gt=0, lt=1, description="compress at this fraction otherwise")
    output_reserve_tokens: int = Field(8_192, ge=0, description="kept free for the answer")
    tail_tokens: int = Field(12_000, gt=0, description="recent messages kept verbatim")
    tail_fraction: float = Field(0.25, gt=0, lt=1, description="tail cap as a fraction of window")
    target_fraction: float = Field(
        0.6,
        gt=0,
        lt=1,
        description="how deep a compression cuts: the rebuilt history must land under this "
        "share of the threshold (lower = smaller requests, more compressions)",
    )
    summary_max_tokens: int = Field(2_000, gt=0)
    min_saving: float = Field(
        0.2,
        ge=0,
        lt=1,
        description="apply a compression only if it saves at least this share of the prompt "
        "(or the prompt does not fit the window); otherwise leave the history as it was",
    )
    tool_result_min_tokens: int = Field(
        1_000,
        gt=0,
        description="a new tool result over its share of the room left is cut to a head and "
        "tail excerpt (the full text is saved to a file); never below this many tokens",
    )
    summary_timeout: float = Field(60.0, gt=0)
    tool_result_keep_chars: int = Field(200, ge=0, description="Phase 1 one-line summaries")
    tool_argument_max_chars: int = Field(2_000, gt=0)
    cooldown_seconds: list[float] = Field(
        default_factory=lambda: [60.0, 300.0, 1800.0, 7200.0],
        description="summarizer failure cool-down ladder",
    )
    warn_after_compressions: int = Field(3, ge=1)
    context_file_max_chars: int = Field(20_000, gt=0, description="cap per project context file")
    context_files: list[str] = Field(
        default_factory=lambda: [".herald.md", "AGENTS.md", "CLAUDE.md", ".cursorrules"],
        description="project context files looked for from the cwd upward",
    )
    default_context_window: int = Field(32_768, gt=0, description="for models not in the table")
    prune: PruneConfig = Field(default_factory=PruneConfig)
