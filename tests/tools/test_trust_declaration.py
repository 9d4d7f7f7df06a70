"""`@tool` / `register()` declare control arguments, consequence and untrusted results."""

from __future__ import annotations

import pytest

from herald.config import HeraldConfig
from herald.tools import ToolContext, ToolRegistry, tool


def test_tool_declares_controls_consequence_and_untrusted_source() -> None:
    @tool(toolset="t", controls=("to",), consequential=True, untrusted="plugin:mail")
    def send_mail(ctx: ToolContext, to: str, body: str) -> str:
        """Send a mail."""
        return "sent"

    assert send_mail.controls == ("to",)
    assert send_mail.consequential is True
    assert send_mail.untrusted == "plugin:mail"


def test_defaults_are_data_only_and_trusted() -> None:
    @tool(toolset="t")
    def echo(ctx: ToolContext, text: str) -> str:
        """Echo."""
        return text

    assert (echo.controls, echo.consequential, echo.untrusted) == ((), False, None)


def test_a_misspelt_control_argument_is_refused_at_declaration() -> None:
    with pytest.raises(ValueError, match="controls name 'recipient'"):

        @tool(toolset="t", controls=("recipient",), consequential=True)
        def send(ctx: ToolContext, to: str) -> str:
            """Send."""
            return ""


def test_outbound_data_arguments_are_declared_and_checked_for_spelling() -> None:
    @tool(toolset="t", controls=("to",), outbound=("body",), consequential=True)
    def send(ctx: ToolContext, to: str, body: str) -> str:
        """Send."""
        return ""

    assert send.outbound == ("body",)
    with pytest.raises(ValueError, match="'text'"):

        @tool(toolset="t", controls=("to",), outbound=("text",), consequential=True)
        def send2(ctx: ToolContext, to: str, body: str) -> str:
            """Send."""
            return ""

    reg = ToolRegistry()
    spec = reg.register(
        "post",
        "chat",
        {"parameters": {"properties": {"channel": {}, "content": {}}}},
        lambda a, c: "",
        controls=("channel",),
        outbound=("content",),
    )
    assert spec.outbound == ("content",)
    with pytest.raises(ValueError, match="'message'"):
        reg.register(
            "post2",
            "chat",
            {"parameters": {"properties": {"content": {}}}},
            lambda a, c: "",
            outbound=("message",),
        )


def test_untrusted_must_be_a_source_label() -> None:
    with pytest.raises(ValueError, match="kind:name"):

        @tool(toolset="t", untrusted="agentdojo")
        def lookup(ctx: ToolContext, q: str) -> str:
            """Look up."""
            return ""


def test_register_takes_the_same_declaration() -> None:
    reg = ToolRegistry()
    spec = reg.register(
        "pay",
        "bank",
        {"description": "pay", "parameters": {"properties": {"iban": {}, "memo": {}}}},
        lambda args, ctx: "ok",
        controls=("iban",),
        consequential=True,
        untrusted="plugin:bank",
    )
    assert (spec.controls, spec.consequential, spec.untrusted) == (
        ("iban",),
        True,
        "plugin:bank",
    )
    with pytest.raises(ValueError, match="controls name 'amount'"):
        reg.register(
            "pay2",
            "bank",
            {"parameters": {"properties": {"iban": {}}}},
            lambda a, c: "",
            controls=("amount",),
        )


def test_trust_config_defaults_and_keys() -> None:
    config = HeraldConfig()
    assert config.trust.enforce is True
    assert config.trust.untrusted_paths == []
    config = HeraldConfig.model_validate(
        {"trust": {"enforce": False, "untrusted_paths": ["~/Downloads/**"]}}
    )
    assert config.trust.enforce is False
    assert config.trust.untrusted_paths == ["~/Downloads/**"]
    with pytest.raises(ValueError):
        HeraldConfig.model_validate({"trust": {"enforced": True}})
