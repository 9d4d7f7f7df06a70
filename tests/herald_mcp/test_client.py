"""The MCP client against real servers: the toy server over stdio and HTTP, and the
third-party `mcp-server-time` (offline)."""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path

import pytest
from mcp_servers import toy_stdio

from herald.config import HeraldConfig
from herald.config.schema_mcp import McpServerConfig
from herald.mcp import STATUS_TOOL, McpManager, McpToolOverlay, tool_name
from herald.toolbox import builtin_tools
from herald.tools import ToolContext, ToolRegistry, select_tools
from herald.tools.definitions import DefinitionsCache

registry = builtin_tools()  # the shared registry a surface would own


def make_manager(tmp_path: Path, **servers: dict) -> McpManager:
    from herald.config import HeraldHome

    home = HeraldHome(tmp_path / "home").ensure()
    return McpManager({name: McpServerConfig(**cfg) for name, cfg in servers.items()}, home=home)


def ctx(**kw) -> ToolContext:
    return ToolContext(config=HeraldConfig(), **kw)


@pytest.fixture(scope="module")
def toy(tmp_path_factory) -> McpToolOverlay:
    manager = make_manager(tmp_path_factory.mktemp("toy"), toy=toy_stdio(approve="never"))
    overlay = McpToolOverlay(registry, manager)
    yield overlay
    overlay.close()


def test_tools_are_listed_named_and_appended_after_builtins_sorted(toy):
    selection = select_tools(toy, HeraldConfig(), cache=DefinitionsCache())
    builtin = select_tools(registry, HeraldConfig(), cache=DefinitionsCache())
    names = list(selection.names)
    assert names[: len(builtin.names)] == list(builtin.names)
    appended = names[len(builtin.names) :]
    assert appended == sorted(appended)
    assert set(appended) >= {"mcp_toy_add", "mcp_toy_slow", "mcp_toy_fail", "mcp_toy_crash"}
    add = next(d for d in selection.definitions if d["function"]["name"] == "mcp_toy_add")
    assert add["function"]["parameters"]["properties"].keys() == {"a", "b"}
    assert "[MCP toy]" in add["function"]["description"]
    assert toy.toolsets()["mcp-toy"] == sorted(appended)
    # the shared registry never sees them
    assert registry.get("mcp_toy_add") is None


def test_call_coerces_arguments_and_joins_text(toy):
    # "2" and "3" are strings as a model might send them; coercion makes them integers.
    result = toy.dispatch("mcp_toy_add", json.dumps({"a": "2", "b": "3"}), ctx())
    assert not result.is_error
    assert result.content == "5"


def test_error_result_is_marked_and_sanitized(toy):
    result = toy.dispatch("mcp_toy_fail", {"reason": "disk"}, ctx())
    assert result.is_error
    assert result.content.startswith("[TOOL_ERROR]")
    assert "it broke: disk" in result.content
    assert "<system>" not in result.content


def test_image_is_described_not_pasted(toy):
    result = toy.dispatch("mcp_toy_picture", {}, ctx())
    assert "a red dot" in result.content
    assert "[image: image/png" in result.content
    assert "iVBOR" not in result.content


def test_interrupt_cancels_the_request(tmp_path):
    marker = tmp_path / "cancelled"
    manager = make_manager(
        tmp_path, toy=toy_stdio(approve="never", env={"TOY_SLOW_MARKER": str(marker)})
    )
    overlay = McpToolOverlay(registry, manager)
    try:
        overlay.refresh()
        context = ctx()
        threading.Timer(0.5, context.cancel.set).start()
        result = overlay.dispatch("mcp_toy_slow", {"seconds": 30}, context)
        assert result.is_error and "interrupted" in result.content
        deadline = time.monotonic() + 10
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert marker.read_text() == "cancelled"  # the server saw the cancellation
        # the connection is still usable
        assert overlay.dispatch("mcp_toy_add", {"a": 1, "b": 1}, ctx()).content == "2"
    finally:
        overlay.close()


def test_per_server_timeout(tmp_path):
    manager = make_manager(tmp_path, toy=toy_stdio(approve="never", timeout_seconds=0.5))
    overlay = McpToolOverlay(registry, manager)
    try:
        overlay.refresh()
        result = overlay.dispatch("mcp_toy_slow", {"seconds": 30}, ctx())
        assert result.is_error
        assert "did not finish within 0.5 s" in result.content
        assert "mcp.servers.toy.timeout_seconds" in result.content
    finally:
        overlay.close()


def test_crash_mid_call_is_reported_and_restarted_once_per_turn(tmp_path):
    manager = make_manager(tmp_path, toy=toy_stdio(approve="never"))
    overlay = McpToolOverlay(registry, manager)
    try:
        overlay.refresh()
        first = overlay.dispatch("mcp_toy_crash", {}, ctx())
        assert first.is_error
        assert "stopped during the call" in first.content
        assert "was restarted" in first.content
        assert overlay.dispatch("mcp_toy_add", {"a": 2, "b": 2}, ctx()).content == "4"
        # a second crash in the same turn (no session: same turn key) is only reported
        second = overlay.dispatch("mcp_toy_crash", {}, ctx())
        assert "already crashed once this turn" in second.content
        later = overlay.dispatch("mcp_toy_add", {"a": 1, "b": 2}, ctx())
        assert later.is_error and "not available" in later.content
    finally:
        overlay.close()


def test_server_that_cannot_start_leaves_its_tools_out_and_says_why(tmp_path):
    manager = make_manager(
        tmp_path,
        broken={"command": str(tmp_path / "no-such-server")},
        toy=toy_stdio(approve="never"),
    )
    overlay = McpToolOverlay(registry, manager)
    try:
        selection = select_tools(overlay, HeraldConfig(), cache=DefinitionsCache())
        names = selection.names
        assert "mcp_toy_add" in names
        assert not any(n.startswith("mcp_broken_") for n in names)
        status = next(d for d in selection.definitions if d["function"]["name"] == STATUS_TOOL)
        assert "broken" in status["function"]["description"]
        assert "no-such-server" in status["function"]["description"]
        call = overlay.dispatch("mcp_broken_anything", {}, ctx())
        assert call.is_error and "herald mcp test broken" in call.content
        states = {s.name: s.state for s in manager.status()}
        assert states == {"broken": "failed", "toy": "ready"}
    finally:
        overlay.close()


def test_a_server_that_exits_at_once_fails_fast_with_its_stderr(tmp_path):
    script = "import sys; print('missing API key FOO', file=sys.stderr); sys.exit(2)"
    manager = make_manager(tmp_path, quick={"command": sys.executable, "args": ["-c", script]})
    try:
        assert manager.tools("quick") == []
        why = manager.failures()["quick"]
        assert "did not start within" not in why  # seen exiting, not waited out
        assert "missing API key FOO" in why
    finally:
        manager.close()


def test_include_exclude_filter(tmp_path):
    manager = make_manager(
        tmp_path,
        toy=toy_stdio(approve="never", tools={"include": ["a*", "s*"], "exclude": ["slow"]}),
    )
    try:
        assert [t.name for t in manager.tools("toy")] == ["add"]
    finally:
        manager.close()


def test_lazy_server_offers_cached_tools_without_starting(tmp_path):
    first = make_manager(tmp_path, toy=toy_stdio(approve="never"))
    try:
        assert "add" in [t.name for t in first.tools("toy")]
    finally:
        first.close()
    second = make_manager(tmp_path, toy=toy_stdio(approve="never"))
    overlay = McpToolOverlay(registry, second)
    try:
        assert "mcp_toy_add" in overlay.refresh()
        assert second.connections["toy"].state == "stopped"  # not started yet
        assert overlay.dispatch("mcp_toy_add", {"a": 3, "b": 4}, ctx()).content == "7"
        assert second.connections["toy"].state == "ready"
    finally:
        overlay.close()


def test_streamable_http(tmp_path, toy_http_url):
    manager = make_manager(tmp_path, web={"url": toy_http_url, "approve": "never"})
    overlay = McpToolOverlay(registry, manager)
    try:
        assert "mcp_web_add" in overlay.refresh()
        assert overlay.dispatch("mcp_web_add", {"a": 20, "b": 22}, ctx()).content == "42"
        failed = overlay.dispatch("mcp_web_fail", {"reason": "net"}, ctx())
        assert failed.is_error and "it broke: net" in failed.content
        context = ctx()
        threading.Timer(0.3, context.cancel.set).start()
        slow = overlay.dispatch("mcp_web_slow", {"seconds": 30}, context)
        assert "interrupted" in slow.content
    finally:
        overlay.close()


def test_http_bearer_secret_missing_is_a_clear_start_error(tmp_path, toy_http_url):
    manager = make_manager(tmp_path, web={"url": toy_http_url, "bearer_token_env": "WEB_TOKEN"})
    try:
        assert manager.tools("web") == []
        assert "WEB_TOKEN" in manager.failures()["web"]
    finally:
        manager.close()


def test_third_party_time_server(tmp_path):
    manager = make_manager(
        tmp_path,
        time={
            "command": sys.executable,
            "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"],
        },
    )
    overlay = McpToolOverlay(registry, manager)
    try:
        names = overlay.refresh()
        assert {"mcp_time_get_current_time", "mcp_time_convert_time"} <= set(names)
        # every tool is read-only, so the default policy asks nobody
        assert manager.policy("time") == "never"
        result = overlay.dispatch(
            "mcp_time_convert_time",
            {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"},
            ctx(),
        )
        assert not result.is_error
        assert "21:00" in result.content
    finally:
        overlay.close()


def test_tool_name_is_api_safe():
    assert tool_name("my-srv", "do.thing/now") == "mcp_my-srv_do_thing_now"
    assert len(tool_name("s", "x" * 200)) == 64


def test_config_needs_exactly_one_transport():
    with pytest.raises(ValueError, match="exactly one"):
        McpServerConfig(command="x", url="http://h/mcp")
    with pytest.raises(ValueError, match="exactly one"):
        McpServerConfig()


def test_per_agent_tools_can_be_registered_on_the_overlay(tmp_path):
    """A memory provider registers its tools on the agent's registry: on an overlay they
    stay on that agent, and both layers' changes show in `generation`."""
    overlay = McpToolOverlay(registry, make_manager(tmp_path))
    try:
        before = overlay.generation
        overlay.register(
            "provider_recall", "core", {"description": "recall"}, lambda args, ctx: "remembered"
        )
        assert overlay.generation != before
        assert overlay.dispatch("provider_recall", {}, ctx()).content == "remembered"
        assert registry.get("provider_recall") is None
        assert (
            "provider_recall"
            in select_tools(overlay, HeraldConfig(), cache=DefinitionsCache()).names
        )
        assert issubclass(McpToolOverlay, ToolRegistry)
    finally:
        overlay.close()
