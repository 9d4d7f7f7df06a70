"""Config section `plugins`: which plugins load, project plugins, hook limits and each
plugin's own settings (``plugins.config.<name>``, validated by the plugin's schema)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from herald.config.strict import StrictModel


class PluginsConfig(StrictModel):
    enabled: list[str] = Field(
        default_factory=list,
        description="plugins to load besides the bundled ones (user, project or installed)",
    )
    disabled: list[str] = Field(
        default_factory=list, description="plugins never loaded, bundled ones included"
    )
    project: bool = Field(
        False, description="also look in ./.herald/plugins of the working directory"
    )
    hook_timeout_seconds: float = Field(
        5.0,
        gt=0,
        description="a hook running longer is logged and skipped (a pre_tool_call hook "
        "refuses the call instead)",
    )
    register_timeout_seconds: float = Field(
        5.0,
        gt=0,
        description="importing a plugin and its register(ctx) each get this long; a plugin "
        "that takes longer is disabled with the reason and Herald starts without it",
    )
    config: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="each plugin's own section, by plugin name"
    )
