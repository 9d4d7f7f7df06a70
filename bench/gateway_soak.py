"""Gateway soak: platforms x messages through the real gateway against the platforms'
fake servers, with a fault every 10-30 s (the server cuts the receiving connection, or
the link goes silent long enough for the watchdog to restart the adapter).

One process: the fake LLM (answers "echo <word>" to each message's unique word), one
fake server per platform, and the gateway (lifecycle `serve`, real runner, watchdog)
on a temporary home. Messages come from `--chats` users at once, each chat one message
at a time (a user waits for the answer before writing again). Printed per platform:
sent, answered, lost (never answered), duplicated (answered more than once), faults
injected, watchdog restarts, and the time per message.

Run: python bench/gateway_soak.py [--platforms telegram,discord,slack] [--messages 500]
     [--chats 10] [--fault-every 10 30] [--seed 33] [--json]

A platform joins by adding a `SoakDriver` to DRIVERS.

With ``--turns N`` it is the other soak, whether one gateway process stays flat: N turns
across 50 chats (API and Telegram) with tool calls, compressions and a session resume
every 100 turns, sampling RSS, descriptors, threads, the WAL and the live agents of a
`herald gateway run` subprocess (see gateway_soak_turns.py):

Run: python bench/gateway_soak.py --turns 5000 [--window 12000] [--idle-seconds 1800]
     [--max-agents 64] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import random
import sys
import tempfile
import time
from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

# ---- platform drivers ----------------------------------------------------------------------


class SoakDriver(ABC):
    """One platform's fake server, seen from the soak: users write, the bot answers."""

    name: str

    @abstractmethod
    def start(self) -> None: ...

    @abstractmethod
    def stop(self) -> None: ...

    @abstractmethod
    def platform_config(self, users: list[str]) -> dict[str, Any]:
        """``gateway.platforms.<name>`` for the adapter, with `users` allowed."""

    def env(self) -> dict[str, str]:
        return {}

    @abstractmethod
    def users(self, n: int) -> list[str]:
        """`n` user ids, each writing in their own direct chat."""

    @abstractmethod
    def say(self, user: str, text: str) -> None: ...

    @abstractmethod
    def answers(self, user: str) -> list[str]:
        """Every text the bot sent in `user`'s chat, oldest first."""

    @abstractmethod
    def cut(self) -> None:
        """The server cuts the receiving connection(s) now."""

    @abstractmethod
    def silence(self, on: bool) -> None:
        """The link stays open but carries nothing (on), or works again (off)."""


class TelegramDriver(SoakDriver):
    name = "telegram"

    def __init__(self) -> None:
        from herald.testing.fake_telegram import FakeTelegramServer

        self.server = FakeTelegramServer()

    def start(self) -> None:
        self.server.start()

    def stop(self) -> None:
        self.server.stop()

    def platform_config(self, users: list[str]) -> dict[str, Any]:
        return {
            "enabled": True,
            "token": "${TELEGRAM_BOT_TOKEN}",
            "base_url": self.server.base_url,
            "allowed_users": users,
            "poll_timeout": 2,
        }

    def env(self) -> dict[str, str]:
        return {"TELEGRAM_BOT_TOKEN": self.server.token}

    def users(self, n: int) -> list[str]:
        return [str(5000 + i) for i in range(n)]

    def say(self, user: str, text: str) -> None:
        self.server.send_user_message(int(user), int(user), text)

    def answers(self, user: str) -> list[str]:
        return [m.text for m in self.server.sent_messages(int(user))]

    def cut(self) -> None:
        self.server.drop_polls()

    def silence(self, on: bool) -> None:
        self.server.silence_polls(on)


class DiscordDriver(SoakDriver):
    """discord.py against the fake gateway: each user writes in a DM channel."""

    name = "discord"

    def __init__(self) -> None:
        from herald.testing.fake_discord import FakeDiscordServer

        self.server = FakeDiscordServer(heartbeat_interval_ms=1000)
        self._channels: dict[str, int] = {}

    def start(self) -> None:
        self.server.start()

    def stop(self) -> None:
        self.server.stop()

    def platform_config(self, users: list[str]) -> dict[str, Any]:
        return {
            "enabled": True,
            "token": "${DISCORD_BOT_TOKEN}",
            "api_base": self.server.api_base,
            "gateway_url": self.server.gateway_url,
            "allowed_users": users,
            "slash_commands": False,
            "heartbeat_timeout": 10.0,
        }

    def env(self) -> dict[str, str]:
        return {"DISCORD_BOT_TOKEN": self.server.token}

    def users(self, n: int) -> list[str]:
        made = []
        for i in range(n):
            user = self.server.add_user(f"soak{i}")
            self._channels[str(user)] = self.server.dm_channel(user)
            made.append(str(user))
        return made

    def say(self, user: str, text: str) -> None:
        self.server.send_user_message(self._channels[user], int(user), text)

    def answers(self, user: str) -> list[str]:
        return [m.content for m in self.server.sent_messages(self._channels[user])]

    def cut(self) -> None:
        self.server.drop_connections()

    def silence(self, on: bool) -> None:
        self.server.go_silent(on)


class SlackDriver(SoakDriver):
    """slack-bolt in Socket Mode against the fake Slack: each user writes in a DM."""

    name = "slack"

    def __init__(self) -> None:
        from herald.testing.fake_slack import FakeSlackServer

        self.server = FakeSlackServer()
        self._channels: dict[str, str] = {}

    def start(self) -> None:
        self.server.start()
        self.server.retry_unacked_after(5.0)  # as Slack retries an unacknowledged event

    def stop(self) -> None:
        self.server.stop()

    def platform_config(self, users: list[str]) -> dict[str, Any]:
        return {
            "enabled": True,
            "bot_token": "${SLACK_BOT_TOKEN}",
            "app_token": "${SLACK_APP_TOKEN}",
            "api_url": self.server.api_url,
            "allowed_users": users,
            "ping_interval": 1.0,
        }

    def env(self) -> dict[str, str]:
        return {"SLACK_BOT_TOKEN": self.server.bot_token, "SLACK_APP_TOKEN": self.server.app_token}

    def users(self, n: int) -> list[str]:
        made = []
        for i in range(n):
            user = self.server.add_user(f"soak{i}")
            self._channels[user] = self.server.dm_channel(user)
            made.append(user)
        return made

    def say(self, user: str, text: str) -> None:
        self.server.send_user_message(self._channels[user], user, text)

    def answers(self, user: str) -> list[str]:
        return [m.text for m in self.server.posted(self._channels[user])]

    def cut(self) -> None:
        self.server.drop_connections()

    def silence(self, on: bool) -> None:
        self.server.go_silent(on)


DRIVERS: dict[str, type[SoakDriver]] = {
    "telegram": TelegramDriver,
    "discord": DiscordDriver,
    "slack": SlackDriver,
}


# ---- the run ---------------------------------------------------------------------------------


@dataclass
class PlatformResult:
    platform: str
    sent: int = 0
    answered: int = 0
    lost: int = 0
    duplicated: int = 0
    cuts: int = 0
    silences: int = 0
    restarts: int = 0
    seconds: float = 0.0
    ms_per_message: float = 0.0


def echo_script(request: Any) -> Any:
    from herald.testing.fake_llm import Reply

    text = request.last_user_text or ""
    word = next((w for w in text.split() if w.startswith("WORD-")), "none")
    return Reply.text(f"echo {word}")


async def wait_answer(driver: SoakDriver, user: str, word: str, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    wanted = f"echo {word}"
    while time.monotonic() < deadline:
        if wanted in driver.answers(user):
            return True
        await asyncio.sleep(0.05)
    return False


async def chat_loop(
    driver: SoakDriver, user: str, words: list[str], timeout: float, result: PlatformResult
) -> None:
    for word in words:
        driver.say(user, f"please {word}")
        result.sent += 1
        await wait_answer(driver, user, word, timeout)


async def faults(
    driver: SoakDriver,
    rng: random.Random,
    every: tuple[float, float],
    silent_for: float,
    result: PlatformResult,
    done: asyncio.Event,
) -> None:
    while not done.is_set():
        try:
            await asyncio.wait_for(done.wait(), rng.uniform(*every))
            return
        except TimeoutError:
            pass
        if rng.random() < 0.5:
            driver.cut()
            result.cuts += 1
        else:
            driver.silence(True)
            result.silences += 1
            await asyncio.sleep(silent_for)
            driver.silence(False)


async def soak(args: argparse.Namespace) -> list[PlatformResult]:
    from herald.gateway.lifecycle import load_adapters, serve, served_settings
    from herald.gateway.runner import GatewayRunner
    from herald.testing.fake_llm import FakeLLMServer
    from herald.testing.homes import fake_model_config, make_home, merge

    rng = random.Random(args.seed)
    drivers = [DRIVERS[name]() for name in args.platforms]
    llm = FakeLLMServer()
    llm.start()
    llm.set_handler(echo_script)
    for driver in drivers:
        driver.start()
    tmp = Path(tempfile.mkdtemp(prefix="herald-soak-"))
    users = {d.name: d.users(args.chats) for d in drivers}
    config = merge(
        fake_model_config(llm),
        {
            "learning": {"enabled": False},
            "gateway": {
                "cwd": str(tmp),
                "busy_mode": "queue",
                "status_edit_interval": 0.0,
                "drain_seconds": 0.0,
                "max_concurrent_turns": 8,
                "watchdog": {"check_every": 0.5, "slack_seconds": 2.0, "restart_backoff": 0.5},
                "platforms": {d.name: d.platform_config(users[d.name]) for d in drivers},
            },
        },
    )
    env: dict[str, str] = {}
    for driver in drivers:
        env.update(driver.env())
    settings = make_home(tmp / "home", config, env)
    adapters, problems = load_adapters(settings)
    if problems:
        raise SystemExit(f"platforms that could not start: {problems}")
    runner = GatewayRunner(served_settings(settings), default_profile=settings.home.profile_label)
    stop = asyncio.Event()
    served = asyncio.ensure_future(serve(runner, adapters, home=settings.home, stop=stop))
    results = {d.name: PlatformResult(d.name) for d in drivers}
    silent_for = args.silent_for
    done = asyncio.Event()
    fault_tasks = [
        asyncio.ensure_future(
            faults(d, rng, tuple(args.fault_every), silent_for, results[d.name], done)
        )
        for d in drivers
    ]
    started = time.monotonic()
    chats = []
    for driver in drivers:
        per_chat = [
            [f"WORD-{driver.name}-{c}-{i}" for i in range(c, args.messages, args.chats)]
            for c in range(args.chats)
        ]
        for user, words in zip(users[driver.name], per_chat, strict=True):
            chats.append(chat_loop(driver, user, words, args.answer_timeout, results[driver.name]))
    await asyncio.gather(*chats)
    done.set()
    await asyncio.gather(*fault_tasks)
    for driver in drivers:
        driver.silence(False)
    # Late answers (retries from the outbox) still count; wait for the stragglers.
    await asyncio.sleep(args.settle)
    elapsed = time.monotonic() - started
    report = runner.health_report() if runner.health_report else {"platforms": []}
    for driver in drivers:
        result = results[driver.name]
        for c, user in enumerate(users[driver.name]):
            answers = driver.answers(user)
            for i in range(c, args.messages, args.chats):
                count = answers.count(f"echo WORD-{driver.name}-{c}-{i}")
                result.answered += count >= 1
                result.lost += count == 0
                result.duplicated += count > 1
        health = next((h for h in report["platforms"] if h["platform"] == driver.name), {})
        result.restarts = int(health.get("restarts_last_hour", 0))
        result.seconds = round(elapsed, 1)
        result.ms_per_message = round(1000 * elapsed / max(result.sent, 1), 1)
    stop.set()
    await asyncio.wait_for(served, 60)
    for driver in drivers:
        driver.stop()
    llm.stop()
    return [results[d.name] for d in drivers]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--platforms",
        default="telegram,discord,slack",
        help=f"comma-separated, from: {', '.join(DRIVERS)} (default: all three)",
    )
    parser.add_argument("--messages", type=int, default=500, help="per platform")
    parser.add_argument("--chats", type=int, default=10, help="users writing at once")
    parser.add_argument("--fault-every", type=float, nargs=2, default=[10.0, 30.0])
    parser.add_argument("--silent-for", type=float, default=6.0, help="seconds of silence")
    parser.add_argument("--answer-timeout", type=float, default=120.0)
    parser.add_argument("--settle", type=float, default=3.0)
    parser.add_argument("--seed", type=int, default=33)
    parser.add_argument("--json", action="store_true", help="the results as JSON")
    parser.add_argument(
        "--turns", type=int, help="run the flatness soak instead: this many turns, 50 chats"
    )
    parser.add_argument(
        "--window", type=int, default=12_000, help="--turns: model.context_length (tokens)"
    )
    parser.add_argument(
        "--idle-seconds", type=float, default=1800.0, help="--turns: gateway.agent_idle_seconds"
    )
    parser.add_argument(
        "--max-agents",
        type=int,
        default=64,
        help="--turns: gateway.max_agents (below 50 the agents are closed and rebuilt all along)",
    )
    parser.add_argument(
        "--tracemalloc",
        action="store_true",
        help="--turns: trace the gateway's allocations; print where the heap grew (slow)",
    )
    args = parser.parse_args(argv)
    if args.turns is not None:
        from gateway_soak_turns import run as run_turns  # bench/ is on sys.path

        return run_turns(args)
    args.platforms = [p.strip() for p in args.platforms.split(",") if p.strip()]
    unknown = [p for p in args.platforms if p not in DRIVERS]
    if unknown:
        parser.error(f"unknown platform(s) {unknown}; known: {', '.join(DRIVERS)}")
    logging.basicConfig(level=logging.ERROR)
    results = asyncio.run(soak(args))
    if args.json:
        print(json.dumps([asdict(r) for r in results], indent=2))
    else:
        print(
            f"{'platform':10} {'sent':>5} {'answered':>8} {'lost':>5} {'dup':>4} "
            f"{'cuts':>5} {'silences':>8} {'restarts':>8} {'ms/msg':>7}"
        )
        for r in results:
            print(
                f"{r.platform:10} {r.sent:5} {r.answered:8} {r.lost:5} {r.duplicated:4} "
                f"{r.cuts:5} {r.silences:8} {r.restarts:8} {r.ms_per_message:7}"
            )
    return 0 if all(r.lost == 0 and r.duplicated == 0 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
