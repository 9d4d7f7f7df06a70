"""The base for every config section: unknown keys are errors, assignments validated."""

import logging
from typing import Any

from pydantic import BaseModel, ConfigDict

log = logging.getLogger(__name__)


class StrictModel(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


def renamed_key(data: Any, old: str, new: str, section: str) -> Any:
    """A section's raw `data` with the deprecated key `old` read as `new` (the new
    one wins when both are set), and a one-line notice saying what to rename."""
    if isinstance(data, dict) and old in data:
        data = dict(data)
        value = data.pop(old)
        data.setdefault(new, value)
        log.warning("config: %s.%s is deprecated; rename it to %s.%s", section, old, section, new)
    return data
