"""Config section for where commands run (`terminal.backend`)."""

from __future__ import annotations

from typing import Literal

from herald.config.strict import StrictModel


class TerminalConfig(StrictModel):
    backend: Literal["local", "ssh"] = "local"
