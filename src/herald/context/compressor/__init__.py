"""The built-in `compressor` context engine (Phases 1–4: prune, boundaries, summary, rebuild)."""

from herald.context.compressor.boundaries import (
    SUMMARY_MARK,
    Boundaries,
    choose_boundaries,
    is_summary,
)
from herald.context.compressor.engine import (
    CompressionReport,
    CompressorEngine,
    CompressorState,
    Summarizer,
)
from herald.context.compressor.prune import PRUNED_MARK, PruneOutcome, prune_tool_results
from herald.context.compressor.summary import (
    SECTIONS,
    fallback_sections,
    merge_sections,
    parse_sections,
    summarizer_messages,
    summary_message_text,
)
from herald.context.engine_base import register_engine

register_engine("compressor", CompressorEngine)

__all__ = [
    "PRUNED_MARK",
    "SECTIONS",
    "SUMMARY_MARK",
    "Boundaries",
    "CompressionReport",
    "CompressorEngine",
    "CompressorState",
    "PruneOutcome",
    "Summarizer",
    "choose_boundaries",
    "fallback_sections",
    "is_summary",
    "merge_sections",
    "parse_sections",
    "prune_tool_results",
    "summarizer_messages",
    "summary_message_text",
]
