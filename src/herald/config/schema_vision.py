"""Config section for images (`vision.*`): whether the models see them and the limits an
attached image is fitted to before it is stored and sent."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from herald.config.strict import StrictModel

Sees = Literal["auto", "on", "off"]


class VisionConfig(StrictModel):
    main: Sees = Field(
        "auto",
        description="whether the main model takes images: auto guesses from its name "
        "(gpt-4o, claude-3+, gemini, …); on/off say so",
    )
    auxiliary: Sees = Field(
        "auto",
        description="whether the auxiliary model takes images (it answers vision_analyze "
        "for a main model that does not)",
    )
    max_edge_px: int = Field(
        1568, ge=64, le=8000, description="longest side an image is shrunk to before sending"
    )
    max_bytes: int = Field(
        3_750_000,
        ge=10_000,
        le=20_000_000,
        description="largest stored image in bytes (base64 adds a third: 5 MB on the wire)",
    )
