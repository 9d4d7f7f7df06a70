"""Idle agents are released on a timer, with no traffic to trigger it, and the next
message rebuilds the agent from the stored session with its whole history."""

from __future__ import annotations

import asyncio
import gc
import subprocess
import sys
import weakref

from gateway_support import eventually
from typer.testing import CliRunner

import herald.cli.gateway_cmd as gateway_cmd
from herald.gateway.lifecycle import serve
from herald.gateway.runner import GatewayRunner
from herald.gateway.testing import LoopbackAdapter
from herald.state.run_files import RunFiles
from herald.testing.fake_llm import Reply


async def test_the_status_file_and_cli_show_the_live_agents(
    gateway_settings, fake_llm, monkeypatch
) -> None:
    settings = gateway_settings(
        {"watchdog": {"check_every": 0.1}, "allowed_users": {"loopback": ["*"]}}
    )
    chat = LoopbackAdapter()
    runner = GatewayRunner({"default": settings})
    stop = asyncio.Event()
    served = asyncio.ensure_future(serve(runner, [chat], home=settings.home, stop=stop))
    await eventually(lambda: chat.connected and chat.sink is runner)
    await chat.inject("hello", chat_id="a")
    await chat.inject("hello", chat_id="b")
    status = RunFiles(settings.home)
    await eventually(lambda: (s := status.read_status()).live_agents == 2 and s.running_turns == 0)
    # `herald gateway status` of this home, as if this process were its gateway (a live
    # pid other than the reader's own).
    stand_in = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        status.pid_path.write_text(f"{stand_in.pid}\n")
        monkeypatch.setenv("HERALD_HOME", str(settings.home.root))
        shown = CliRunner().invoke(gateway_cmd.app, ["status"], obj={})
    finally:
        stand_in.kill()
        stand_in.wait()
    assert "running turns: 0; live agents: 2" in shown.output.splitlines()[0], shown.output
    stop.set()
    assert await asyncio.wait_for(served, 15) == 0


async def test_an_idle_chats_agent_is_closed_and_the_next_message_has_its_history(
    gateway_settings, fake_llm
) -> None:
    settings = gateway_settings({"agent_idle_seconds": 0.3, "watchdog": {"check_every": 0.1}})
    chat = LoopbackAdapter()
    runner = GatewayRunner({"default": settings})
    stop = asyncio.Event()
    served = asyncio.ensure_future(serve(runner, [chat], home=settings.home, stop=stop))
    await eventually(lambda: chat.connected and chat.sink is runner)

    fake_llm.enqueue(Reply.text("noted"))
    first = await chat.inject("the code word is PLOVER")
    (key,) = runner.cache.keys()
    entry = runner.cache.get(key)
    assert entry is not None
    agent = entry.agent
    held = weakref.ref(agent)
    del entry

    # Nothing is sent meanwhile: only the gateway's own timer can release it.
    await eventually(lambda: len(runner.cache) == 0, timeout=5)
    assert agent.closed  # its client, tools and environment were let go
    del agent
    gc.collect()
    assert held() is None  # and nothing else holds on to it

    fake_llm.enqueue(Reply.text("PLOVER"))
    again = await chat.inject("what was the code word?")
    assert again.text == "PLOVER" and again.session_id == first.session_id
    sent = fake_llm.model_requests()[-1].messages
    assert any("the code word is PLOVER" in str(m.get("content")) for m in sent)
    assert any(m.get("role") == "assistant" and m.get("content") == "noted" for m in sent)
    stop.set()
    assert await asyncio.wait_for(served, 15) == 0
