"""One session's browser: a headless Chromium (Playwright, Debian's binary), started on
first use, closed with the session or after `browser.idle_timeout_seconds` idle.

Playwright's sync API belongs to the thread that started it, and tool calls come
from several threads, so every browser operation runs on one worker thread per
session; callers hand it a function and wait (an interrupt stops the wait).

What the browser may reach is the web tools' policy: every request any page
makes (navigations, redirects, sub-resources, popups, form posts, websockets)
passes `check_url`, so private addresses are refused unless
`web.allow_private_networks` is set, and only http(s) loads from the network.
The profile is a fresh directory under the home (never the user's own), and
Chromium starts with a secret-free environment.

Downloads land in the profile's own folder, which is watched while they run: they
are cancelled when together they pass MAX_DOWNLOAD_BYTES (also between tool calls: a
page can start one on a timer) or still run three navigation timeouts after the
action that started them (60 s by default). Waiting for Playwright to say a download
had finished held the tool call, and the browser with it, for as long as a page kept
sending, while the disk filled.
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import shutil
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from herald.config import HeraldConfig, resolve_home
from herald.environments import build_child_env
from herald.tools.browser.reaper import Profile, new_profile, reap_orphans
from herald.tools.registry import ToolArgumentError, ToolContext
from herald.tools.web.fetch import FetchError, check_url

log = logging.getLogger(__name__)
T = TypeVar("T")

_LOCAL_SCHEMES = ("about:", "data:", "blob:")  # never reach the network
MAX_DOWNLOAD_BYTES = 50 * 1024 * 1024  # all of a browser's downloads in progress
DOWNLOAD_WAIT_TIMEOUTS = 3  # navigation timeouts a download may run after its action
_PARTIAL = ".crdownload"  # Chromium's name for a download still running
_SETTLED_SECONDS = 0.5  # no download running for this long: they have all ended


class BrowserError(ToolArgumentError):
    """Shown to the model as the tool's error."""


def find_chromium(config: HeraldConfig) -> str:
    configured = config.browser.executable
    found = configured or shutil.which("chromium") or shutil.which("chromium-browser")
    if not found or not os.access(found, os.X_OK):
        raise BrowserError(
            "no Chromium to drive: install Debian's (apt install chromium) or set "
            "browser.executable to the binary; Herald never downloads a browser"
            + (f" ({configured} is not an executable file)" if configured else "")
        )
    return found


@dataclass
class Download:
    name: str
    data: bytes | None  # None when it failed or was too large
    problem: str = ""


@dataclass
class Browser:
    """What a browser operation sees (on the worker thread only)."""

    context: Any
    pages: list[Any]
    allow_private: bool
    timeout_ms: float
    downloads_enabled: bool
    downloads_dir: Path | None = None  # where Chromium writes them (the profile's own)
    blocked: list[str] = field(default_factory=list)  # refused requests since last drained
    events: list[str] = field(default_factory=list)  # popups, dialogs, closed tabs
    downloads: list[Any] = field(default_factory=list)
    cancelled: set[int] = field(default_factory=set)  # id() of downloads cancelled here

    @property
    def page(self) -> Any:
        self.pages[:] = [p for p in self.pages if not p.is_closed()]
        if not self.pages:
            self.pages.append(self.context.new_page())
        return self.pages[-1]

    def check(self, url: str) -> str:
        """`url` if the policy lets the browser load it, else BrowserError."""
        if url.startswith(_LOCAL_SCHEMES):
            raise BrowserError(f"only http(s) URLs can be opened (got {url[:80]!r})")
        try:
            return check_url(url, allow_private=self.allow_private)
        except FetchError as exc:
            raise BrowserError(str(exc)) from None

    def drain_notes(self) -> list[str]:
        notes = list(self.events)
        if self.blocked:
            shown = ", ".join(self.blocked[:5]) + (" …" if len(self.blocked) > 5 else "")
            notes.append(
                f"{len(self.blocked)} request(s) were blocked by the network policy: {shown}"
            )
        self.events.clear()
        self.blocked.clear()
        return notes

    def take_downloads(self) -> list[Download]:
        """The downloads started since the last call, once each has ended: finished,
        failed, or cancelled here for passing MAX_DOWNLOAD_BYTES or the time allowed."""
        if not self.downloads:
            return []
        problem = self._wait_for_downloads(DOWNLOAD_WAIT_TIMEOUTS * self.timeout_ms / 1000.0)
        out = []
        for download in self.downloads:
            name = download.suggested_filename
            try:
                failure = download.failure()
                if failure is not None:
                    out.append(Download(name, None, problem or failure))
                    continue
                path = download.path()
                size = os.path.getsize(path) if path else 0
                if size > MAX_DOWNLOAD_BYTES:
                    out.append(Download(name, None, f"larger than {MAX_DOWNLOAD_BYTES:,} bytes"))
                else:
                    out.append(Download(name, Path(path).read_bytes()))
                with contextlib.suppress(Exception):
                    download.delete()  # the folder holds only what is still to come
            except Exception as exc:  # a failed download is reported, not raised
                out.append(Download(name, None, str(exc)))
        self.downloads.clear()
        self.cancelled.clear()
        return out

    def _wait_for_downloads(self, wait_seconds: float) -> str:
        """Wait (letting the page's events run) until no download is running; cancel
        them all when they pass the size cap or the wait. Returns why, if cancelled."""
        deadline = time.monotonic() + wait_seconds
        settled_at: float | None = None
        while True:
            usage = self._download_usage()
            problem = self.stop_oversized(usage=usage)
            if problem:
                return problem
            now = time.monotonic()
            if usage[1]:
                settled_at = None
            elif settled_at is None:
                settled_at = now
            elif now - settled_at >= _SETTLED_SECONDS:
                return ""
            if now >= deadline:
                self._cancel_downloads()
                return f"still downloading after {wait_seconds:.0f} s, cancelled"
            self.page.wait_for_timeout(100)

    def _download_usage(self) -> tuple[int, int]:
        """(bytes in the downloads folder, downloads still running)."""
        total = running = 0
        if self.downloads_dir is None:
            return 0, 0
        with contextlib.suppress(OSError), os.scandir(self.downloads_dir) as entries:
            for entry in entries:
                with contextlib.suppress(OSError):
                    total += entry.stat().st_size
                    running += entry.name.endswith(_PARTIAL)
        return total, running

    def stop_oversized(
        self, between_calls: bool = False, usage: tuple[int, int] | None = None
    ) -> str:
        """Cancel the running downloads when the folder has passed MAX_DOWNLOAD_BYTES;
        returns why, or "" when they are within it. `between_calls`: no tool call is
        waiting for them, so the next one is told in its notes. `usage`: the folder's
        `_download_usage()`, when the caller has just read it."""
        total, running = usage if usage is not None else self._download_usage()
        if not running or total <= MAX_DOWNLOAD_BYTES:
            return ""
        with contextlib.suppress(Exception):
            self.page.wait_for_timeout(10)  # their "download" events, if not yet seen
        if self._cancel_downloads() and between_calls:
            self.events.append(
                f"a download the page started passed {MAX_DOWNLOAD_BYTES:,} bytes and was cancelled"
            )
        return f"larger than {MAX_DOWNLOAD_BYTES:,} bytes, cancelled"

    def _cancel_downloads(self) -> int:
        """Cancel the downloads not cancelled yet; returns how many."""
        fresh = [d for d in self.downloads if id(d) not in self.cancelled]
        for download in fresh:
            self.cancelled.add(id(download))
            with contextlib.suppress(Exception):
                download.cancel()
        return len(fresh)

    # -- event handlers (run on the worker thread) ---------------------------------

    def route(self, route: Any) -> None:
        url = route.request.url
        if url.startswith(_LOCAL_SCHEMES):
            route.continue_()
            return
        try:
            check_url(url, allow_private=self.allow_private)
        except FetchError:
            self.blocked.append(url[:200])
            route.abort("blockedbyclient")
            return
        route.continue_()

    def route_socket(self, socket: Any) -> None:
        try:
            check_url(socket.url.replace("ws", "http", 1), allow_private=self.allow_private)
        except FetchError:
            self.blocked.append(socket.url[:200])
            socket.close()
            return
        socket.connect_to_server()

    def on_page(self, page: Any) -> None:
        if page not in self.pages:
            self.pages.append(page)
            self.events.append("a new tab opened (a popup); the tools now act on it")
        self._watch(page)

    def _watch(self, page: Any) -> None:
        page.on("dialog", self._dialog)
        page.on("download", self._download)

    def _dialog(self, dialog: Any) -> None:
        self.events.append(
            f"the page showed a {dialog.type} dialog, dismissed: {dialog.message[:200]!r}"
        )
        with contextlib.suppress(Exception):
            dialog.dismiss()

    def _download(self, download: Any) -> None:
        if self.downloads_enabled:
            self.downloads.append(download)
        else:
            self.events.append("a download was refused (browser.downloads is off)")
            with contextlib.suppress(Exception):
                download.cancel()


_STOP = object()


class _Worker(threading.Thread):
    def __init__(self, ctx: ToolContext, idle_seconds: float, on_exit: Callable[[_Worker], None]):
        super().__init__(name="herald-browser", daemon=True)
        config = ctx.config or HeraldConfig()
        self.executable = find_chromium(config)
        self.settings = config.browser
        self.allow_private = config.web.allow_private_networks
        self.env = build_child_env(ctx.secrets)
        home = ctx.home or resolve_home()
        self.root = home.cache_dir / "browser"
        self.idle_seconds = idle_seconds
        self.on_exit = on_exit
        self.jobs: queue.Queue[Any] = queue.Queue()
        self.started = threading.Event()
        self.start_error: BaseException | None = None
        self.profile: Profile | None = None

    def run(self) -> None:
        try:
            from playwright.sync_api import sync_playwright
        except ImportError:
            self.start_error = BrowserError(
                "the browser tools need Playwright: pip install 'herald[browser]'"
            )
            self.started.set()
            self.on_exit(self)
            return
        try:
            with sync_playwright() as playwright:
                browser = self._launch(playwright)
                self.started.set()
                try:
                    self._serve(browser)
                finally:
                    with contextlib.suppress(Exception):
                        browser.context.close()
        except BaseException as exc:  # a launch failure is the first caller's error
            if not self.started.is_set():
                self.start_error = BrowserError(f"Chromium could not start: {exc}")
            else:
                log.warning("the browser worker stopped: %s", exc)
        finally:
            if self.profile is not None:
                self.profile.release()
            self.started.set()
            self.on_exit(self)
            self._fail_pending()

    def _launch(self, playwright: Any) -> Browser:
        reap_orphans(self.root)
        self.profile = new_profile(self.root)
        args = ["--disable-extensions", "--no-first-run", "--disable-sync"]
        if os.geteuid() == 0:  # Chromium refuses to run its sandbox as root
            args.append("--no-sandbox")
        timeout_ms = self.settings.navigation_timeout_seconds * 1000.0
        downloads = self.profile.directory / "downloads"
        context = playwright.chromium.launch_persistent_context(
            str(self.profile.directory),
            executable_path=self.executable,
            headless=True,
            args=args,
            env=self.env,
            accept_downloads=self.settings.downloads,
            downloads_path=str(downloads),
            service_workers="block",  # a service worker's fetches would skip the routing
            viewport={"width": 1280, "height": 900},
        )
        context.set_default_timeout(timeout_ms)
        context.set_default_navigation_timeout(timeout_ms)
        browser = Browser(
            context,
            list(context.pages),
            self.allow_private,
            timeout_ms,
            self.settings.downloads,
            downloads,
        )
        context.route("**/*", browser.route)
        with contextlib.suppress(AttributeError):  # older Playwright: no websocket routing
            context.route_web_socket("**/*", browser.route_socket)
        context.on("page", browser.on_page)
        for page in browser.pages:
            browser._watch(page)
        return browser

    def _serve(self, browser: Browser) -> None:
        idle_until = time.monotonic() + self.idle_seconds
        while True:
            try:
                # woken each second to keep a download a page started between calls
                # within the cap
                job = self.jobs.get(timeout=max(0.0, min(1.0, idle_until - time.monotonic())))
            except queue.Empty:
                if time.monotonic() >= idle_until:
                    log.info("closing the browser after %.0f s idle", self.idle_seconds)
                    return
                with contextlib.suppress(Exception):
                    browser.stop_oversized(between_calls=True)
                continue
            if job is _STOP:
                return
            fn, future = job
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(fn(browser))
                except BaseException as exc:
                    future.set_exception(exc)
            idle_until = time.monotonic() + self.idle_seconds

    def _fail_pending(self) -> None:
        while True:
            try:
                job = self.jobs.get_nowait()
            except queue.Empty:
                return
            if job is not _STOP:
                job[1].set_exception(BrowserError("the browser was closed; call the tool again"))


class BrowserSession:
    """This agent's browser (`ctx.own(BrowserSession)`); closed by `close()`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._worker: _Worker | None = None

    @property
    def running(self) -> bool:
        return self._worker is not None and self._worker.is_alive()

    def call(self, ctx: ToolContext, fn: Callable[[Browser], T]) -> T:
        worker = self._ensure(ctx)
        future: Future[T] = Future()
        worker.jobs.put((fn, future))
        while True:
            try:
                return future.result(timeout=0.05)
            except TimeoutError:
                if ctx.cancel.is_set():
                    future.cancel()
                    raise BrowserError("interrupted; the browser is still open") from None

    def _ensure(self, ctx: ToolContext) -> _Worker:
        with self._lock:
            if self._worker is not None and self._worker.is_alive():
                return self._worker
            config = ctx.config or HeraldConfig()
            worker = _Worker(ctx, config.browser.idle_timeout_seconds, self._forget)
            worker.start()
            worker.started.wait()
            if worker.start_error is not None:
                raise worker.start_error
            self._worker = worker
            return worker

    def _forget(self, worker: _Worker) -> None:
        with self._lock:
            if self._worker is worker:
                self._worker = None

    def close(self, wait: float = 10.0) -> bool:
        """Close the browser; True when one was open."""
        with self._lock:
            worker, self._worker = self._worker, None
        if worker is None or not worker.is_alive():
            return False
        worker.jobs.put(_STOP)
        worker.join(wait)
        return True


__all__ = ["Browser", "BrowserError", "BrowserSession", "Download", "find_chromium"]
