"""Config section for the web tools' backends."""

from __future__ import annotations

from herald.config.strict import StrictModel


class WebConfig(StrictModel):
    pass
