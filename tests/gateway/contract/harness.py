"""The adapter contract suite's view of a platform (no tests here).

Each platform supplies a `PlatformHarness`: its fake server, the config section that
points the real adapter at it, and the few moves the contract needs — a user writes
(in a DM, in a group, in a thread, with an attachment), presses a button, the server
delivers an event again, the server refuses the next sends — plus what the bot sent.
Everything else (the gateway, the runner, the fake model) is shared, so every
platform is held to the same behaviour by the same tests.

To add a platform: write ``<name>_harness.py`` with a `PlatformHarness` subclass and
list it in `HARNESSES` (conftest.py).
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

from herald.config import Settings
from herald.testing.fake_llm import FakeLLMServer, RecordedRequest, Reply
from herald.testing.homes import fake_model_config, make_home, merge

Where = Literal["dm", "group"]

APPROVAL_COMMAND = "python3 -c 'print(6*7)'"  # inline interpreter code: needs approval
LONG_REPLY = "\n\n".join(
    [
        f"Section {i} of the report: " + "all systems nominal, nothing to do. " * 14
        for i in range(30)
    ]
    + ["```text\n" + "log line ok\n" * 150 + "```", "That is the whole report."]
)


@dataclass(frozen=True)
class Sent:
    """One message the bot sent, as the platform's fake recorded it."""

    ref: str  # the platform's message id
    text: str  # as a user reads it (markup removed)
    buttons: tuple[str, ...] = ()  # the data each button sends back
    reply_to: str | None = None
    thread: str | None = None
    extra: dict[str, Any] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class FileSeen:
    """One file the bot uploaded, as the platform's fake recorded it."""

    name: str
    data: bytes
    caption: str = ""


class PlatformHarness(ABC):
    """A platform under the contract: its fake server and how to play its users."""

    name: str
    owner: str  # the owner's user id as the adapter reports it (an approver)
    member: str  # an allowed user who is not an approver
    thread_a: str  # two threads of the group chat
    thread_b: str
    # What the contract assumes that a platform may lack, each with the reason it does:
    # "groups" (group chats and their threads), "splitting" (a limit low enough that a
    # long reply is split), "fault_modes" (a fake that can go silent, cut connections
    # and storm: the liveness suite). A test that needs one calls `require`, which
    # skips it with the reason where the platform lacks it.
    lacks: ClassVar[dict[str, str]] = {}

    def require(self, capability: str) -> None:
        if capability in self.lacks:
            import pytest

            pytest.skip(f"{self.name} lacks {capability}: {self.lacks[capability]}")

    # False where the platform cannot edit a sent message: no status line shows the
    # running tool, so tests learn that a turn is running from the fake model instead.
    supports_edits: bool = True

    # Photos and voice notes reach the runner as files (herald.gateway.media)
    media: bool = False

    @abstractmethod
    def start(self) -> None:
        """Start the fake server."""

    @abstractmethod
    def stop(self) -> None: ...

    @abstractmethod
    def platform_config(self) -> dict[str, Any]:
        """``gateway.platforms.<name>``: enabled, pointed at the fake, users allowed."""

    def env(self) -> dict[str, str]:
        """Secrets the config refers to (tokens)."""
        return {}

    @abstractmethod
    def max_length(self) -> int:
        """The platform's message limit, in the units `measure` counts."""

    def measure(self, text: str) -> int:
        return len(text)

    # ---- playing the users ------------------------------------------------------------------

    @abstractmethod
    def say(
        self,
        user: str,
        text: str,
        *,
        where: Where = "dm",
        thread: str | None = None,
        attachment: tuple[str, str, bytes] | None = None,
    ) -> str:
        """`user` writes `text` (in their DM with the bot, or in the group, in `thread`);
        `attachment` is (file name, MIME type, content). Returns the message's id."""

    @abstractmethod
    def press(self, user: str, sent: Sent, data: str, *, where: Where = "dm") -> None:
        """`user` presses the button of `sent` that sends `data`."""

    @abstractmethod
    def replay_last_event(self) -> None:
        """The platform delivers the newest inbound event again, with the same id."""

    @abstractmethod
    async def replay_taken(self) -> None:
        """Returns once the adapter has received the replay (whatever it did with it)."""

    @abstractmethod
    def fail_sends(self, times: int) -> None:
        """The next `times` message sends are refused with a server error (5xx)."""

    @abstractmethod
    def fail_uploads(self, times: int) -> None:
        """The next `times` file uploads are refused with a server error (5xx)."""

    # ---- fault modes (the liveness suite) ----------------------------------------------------

    def liveness_config(self) -> dict[str, Any]:
        """Extra ``gateway.platforms.<name>`` settings that make the platform's rhythm
        short enough for the liveness tests (a 1 s long poll, a fast heartbeat)."""
        return {}

    @abstractmethod
    def silence(self, on: bool) -> None:
        """The link stays open but carries nothing: long polls never answer, or the
        websocket stops acknowledging heartbeats and dispatching events. Off: it works
        again (whatever hung is cut)."""

    @abstractmethod
    def drop_connections_every(self, seconds: float | None) -> None:
        """The server cuts the receiving connection every `seconds` (None: stops)."""

    @abstractmethod
    def storm(self, on: bool) -> None:
        """Every API call answers a 5xx while on."""

    # What the down reason of a storm names (one of them): the server's 5xx over HTTP,
    # a line protocol's own refusal (IMAP's BYE, SMTP's 421) elsewhere.
    storm_marks: tuple[str, ...] = ("502", "503", "Bad Gateway")

    # ---- what the bot did -------------------------------------------------------------------

    @abstractmethod
    def sent(self, *, where: Where = "dm", thread: str | None = None) -> list[Sent]:
        """Messages the bot sent to that chat (and thread), oldest first."""

    @abstractmethod
    def files(self, *, where: Where = "dm", thread: str | None = None) -> list[FileSeen]:
        """Files the bot uploaded to that chat (and thread), oldest first."""

    async def wait_for_file(
        self, name: str, *, where: Where = "dm", thread: str | None = None, timeout: float = 30
    ) -> FileSeen:
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            found = next(
                (f for f in self.files(where=where, thread=thread) if f.name == name), None
            )
            if found is not None:
                return found
            if asyncio.get_running_loop().time() > deadline:
                texts = [s.text[:80] for s in self.sent(where=where, thread=thread)]
                raise TimeoutError(f"{self.name}: no file {name} after {timeout} s; sent: {texts}")
            await asyncio.sleep(0.05)

    async def wait_for(
        self,
        predicate: Callable[[Sent], bool],
        what: str,
        *,
        where: Where = "dm",
        thread: str | None = None,
        timeout: float = 30.0,
    ) -> Sent:
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            found = next((s for s in self.sent(where=where, thread=thread) if predicate(s)), None)
            if found is not None:
                return found
            if asyncio.get_running_loop().time() > deadline:
                texts = [s.text[:60] for s in self.sent(where=where, thread=thread)]
                raise TimeoutError(f"{self.name}: no {what} after {timeout} s; sent: {texts}")
            await asyncio.sleep(0.05)


# ---- the shared side: a home, the fake model's script, the gateway ----------------------------


def tool_results_since_user(request: RecordedRequest) -> int:
    count = 0
    for message in reversed(request.messages):
        if message.get("role") == "user":
            break
        count += message.get("role") == "tool"
    return count


def script(request: RecordedRequest) -> Reply | None:
    """The fake model: a code word in the newest user message picks the story."""
    text = request.last_user_text or ""
    done = tool_results_since_user(request)
    if "APPROVE" in text:
        if done == 0:
            return Reply.tool_call("terminal", {"command": APPROVAL_COMMAND})
        return Reply.text("The answer is 42.")
    if "REPORT" in text:
        return Reply.text(LONG_REPLY)
    if "SLOW" in text:
        if done == 0:
            return Reply.tool_call("terminal", {"command": "sleep 30"})
        return Reply.text("The wait is over.")
    if "SENDFILE" in text:  # "SENDFILE <path>": the model sends that file
        if done == 0:
            path = text.split("SENDFILE", 1)[1].split()[0]
            return Reply.tool_call("send_file", {"path": path, "caption": "your file"})
        return Reply.text("File step done.")
    if "ATTACHED" in text:
        return Reply.text("I see the file.")
    for word in text.split():
        if word.startswith("WORD-"):
            return Reply.text(f"echo {word}")
    return Reply.text("ok")


def contract_settings(
    harness: PlatformHarness,
    root: Path,
    fake_llm: FakeLLMServer,
    workdir: Path,
    gateway: dict[str, Any] | None = None,
    extra: dict[str, Any] | None = None,
) -> Settings:
    """`gateway` merges into the gateway section, `extra` into the whole config."""
    fake_llm.set_handler(script)
    config = merge(
        fake_model_config(fake_llm),
        {
            "learning": {"enabled": False},
            "identities": {
                "owner": {"role": "owner", "accounts": [f"{harness.name}:{harness.owner}"]},
                "dana": {"role": "member", "accounts": [f"{harness.name}:{harness.member}"]},
            },
            "gateway": {
                "cwd": str(workdir),
                "status_edit_interval": 0.0,
                "drain_seconds": 0.0,
                "send_retries": 0,
                "send_timeout_seconds": 10.0,
                "watchdog": {"check_every": 0.2, "delivery_backoff": 0.2},
                "platforms": {harness.name: harness.platform_config()},
            },
        },
    )
    config = merge(merge(config, {"gateway": gateway or {}}), extra or {})
    return make_home(root, config, harness.env())


class Gateway:
    """`herald gateway run` minus the signals: the lifecycle's own `serve` on this loop."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.stop_event = asyncio.Event()
        self.task: asyncio.Task[int] | None = None
        self.runner: Any = None

    async def start(self) -> Gateway:
        from herald.gateway.lifecycle import load_adapters, serve, served_settings
        from herald.gateway.runner import GatewayRunner

        adapters, problems = load_adapters(self.settings)
        assert problems == [], problems
        self.runner = GatewayRunner(
            served_settings(self.settings), default_profile=self.settings.home.profile_label
        )
        self.task = asyncio.ensure_future(
            serve(self.runner, adapters, home=self.settings.home, stop=self.stop_event)
        )
        while not self.runner.adapters or any(
            a.health.assess().state in ("starting", "stopped")
            for a in self.runner.adapters.values()
        ):
            if self.task.done():
                raise RuntimeError(f"the gateway exited with {self.task.result()}")
            await asyncio.sleep(0.05)
        return self

    async def stop(self) -> int:
        assert self.task is not None
        self.stop_event.set()
        return await asyncio.wait_for(self.task, 30)


StartGateway = Callable[..., Awaitable["Gateway"]]  # the `gateway` fixture


async def until_tool_runs(
    harness: PlatformHarness, fake_llm: FakeLLMServer, asked: str, timeout: float = 30.0
) -> None:
    """Returns once the turn for `asked` is running its slow tool: its status line shows
    it, or (no edits, no status line) the fake model was asked (the turn holds the
    session from then on, whether its tool call has reached the terminal yet or not)."""
    if harness.supports_edits:
        await harness.wait_for(lambda s: "sleep 30" in s.text, "status of the running tool")
        return
    deadline = asyncio.get_running_loop().time() + timeout
    while not any(said(t, asked) for t in model_user_texts(fake_llm)):
        if asyncio.get_running_loop().time() > deadline:
            raise TimeoutError(f"{harness.name}: the model was never asked {asked!r}")
        await asyncio.sleep(0.05)


def said(text: str, words: str) -> bool:
    """`text` (a user message as the model got it) is `words`: its last line, since a
    platform may put a line of context first (email: the first mail's subject)."""
    lines = text.strip().splitlines()
    return bool(lines) and lines[-1].strip() == words


def model_user_texts(fake_llm: FakeLLMServer) -> list[str]:
    return [r.last_user_text or "" for r in fake_llm.model_requests()]


__all__ = [
    "APPROVAL_COMMAND",
    "LONG_REPLY",
    "FileSeen",
    "Gateway",
    "PlatformHarness",
    "Sent",
    "StartGateway",
    "Where",
    "contract_settings",
    "model_user_texts",
    "said",
    "script",
    "until_tool_runs",
]
