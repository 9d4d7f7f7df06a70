"""Config section `gateway`: the long-running process and its platforms."""

from __future__ import annotations

from herald.config.strict import StrictModel


class GatewayConfig(StrictModel):
    pass
