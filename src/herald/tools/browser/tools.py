"""The browser tools: navigate, read the page as an accessibility tree with element
refs, act on refs, screenshot, close.

Everything a page says is untrusted web content: each result that carries page text
starts with the web tools' untrusted marker and names its source as ``web:<url>``
(`untrusted_source`), and secrets are masked. Screenshots and downloads are written
into the session's working directory through the file tools' write gate.
"""

from __future__ import annotations

import re
import time
from typing import Annotated, Any, Literal

from pydantic import Field

from herald.config import HeraldConfig
from herald.safety.provenance import untrusted
from herald.tools.browser.session import (
    Browser,
    BrowserError,
    BrowserSession,
    Download,
    find_chromium,
)
from herald.tools.consequence import url_sends_data
from herald.tools.declare import Flag, tool
from herald.tools.registry import ToolContext, ToolResult, ToolSpec
from herald.tools.terminal import session_environment
from herald.tools.web.common import UNTRUSTED_NOTE, scrub
from herald.tools.write_gate import gate_write

TOOLSET = "browser"
_REF = re.compile(r"^[a-z]*\d+(?:[a-z]+\d+)*$")
_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")
Seconds = Annotated[int, Field(ge=1, le=120, strict=True)]


def untrusted_source(url: str) -> str:
    """The provenance of text read from a page (feat/provenance's ``untrusted:<source>``)."""
    return f"web:{url}"


def browser_available(ctx: ToolContext) -> bool:
    """Offered only where Playwright is installed and a Chromium is found."""
    import importlib.util

    try:
        find_chromium(_config(ctx))
    except BrowserError:
        return False
    return importlib.util.find_spec("playwright") is not None


def _session(ctx: ToolContext) -> BrowserSession:
    return ctx.own(BrowserSession)


def _config(ctx: ToolContext) -> HeraldConfig:
    return ctx.config or HeraldConfig()


def _locator(browser: Browser, ref: str) -> Any:
    ref = ref.strip()
    if not _REF.match(ref):
        raise BrowserError(
            f"ref must be an element ref from browser_snapshot such as 'e12', got {ref[:40]!r}"
        )
    locator = browser.page.locator(f"aria-ref={ref}")
    if locator.count() == 0:
        raise BrowserError(
            f"no element {ref} on the page now; call browser_snapshot for fresh refs"
        )
    return locator


def _where(browser: Browser) -> str:
    page = browser.page
    title = page.title() or "(no title)"
    tabs = len(browser.pages)
    return f"{title} — {page.url}" + (f" (tab {tabs} of {tabs})" if tabs > 1 else "")


def _status(
    ctx: ToolContext, browser_text: str, notes: list[str], downloads: list[Download], url: str
) -> ToolResult:
    lines = [browser_text, *(f"[{n}]" for n in notes)]
    lines += _save_downloads(ctx, downloads)
    # the page's title and notes are the page's words: untrusted, from its address
    return ToolResult(scrub("\n".join(lines), ctx), provenance=untrusted(untrusted_source(url)))


def _act(ctx: ToolContext, action: Any, what: str) -> ToolResult:
    """Run `action(browser)` on the session's browser and report where it left the page."""

    def run(browser: Browser) -> tuple[str, list[str], list[Download], str]:
        from playwright.sync_api import Error as PlaywrightError

        try:
            action(browser)
        except PlaywrightError as exc:
            message = str(exc).splitlines()[0]
            raise BrowserError(f"{what} failed: {message}") from None
        _settle(browser)
        return (
            f"{what}. Now at: {_where(browser)}",
            browser.drain_notes(),
            browser.take_downloads(),
            browser.page.url,
        )

    text, notes, downloads, url = _session(ctx).call(ctx, run)
    return _status(ctx, text, notes, downloads, url)


def _settle(browser: Browser, seconds: float = 2.0) -> None:
    """Give a navigation an action started a moment to land (a page that never finishes
    loading is left as it is)."""
    from playwright.sync_api import Error as PlaywrightError

    try:
        # A moment for what the action set off to arrive (a popup's new tab, a navigation).
        browser.page.wait_for_timeout(150)
        browser.page.wait_for_load_state("domcontentloaded", timeout=seconds * 1000)
    except PlaywrightError:
        pass


def _save_downloads(ctx: ToolContext, downloads: list[Download]) -> list[str]:
    notes = []
    for item in downloads:
        if item.data is None:
            notes.append(f"[download {item.name!r} not saved: {item.problem}]")
            continue
        name = _SAFE_NAME.sub("_", item.name).lstrip(".") or "download"
        path = _write_into_workdir(ctx, "downloads", name, item.data, tool="browser download")
        notes.append(f"[downloaded {item.name!r} to {path} ({len(item.data):,} bytes)]")
    return notes


def _write_into_workdir(ctx: ToolContext, folder: str, name: str, data: bytes, *, tool: str) -> str:
    environment = session_environment(ctx)
    path = environment.resolve(f"{folder}/{name}")
    gate_write(tool, path, ctx, environment)  # the one write gate, as for write_file
    environment.write_bytes(path, data)
    return path


# -- the tools ------------------------------------------------------------------------


@tool(
    toolset=TOOLSET,
    check=browser_available,
    controls=("url",),
    consequential=True,
    consequence=url_sends_data,
)
def browser_navigate(ctx: ToolContext, url: str) -> ToolResult:
    """Open an http(s) URL in the session's browser (a headless Chromium, started on first
    use). Then call browser_snapshot to read the page and get element refs.

    Args:
        url: the http(s) address to open
    """

    def go(browser: Browser) -> None:
        from playwright.sync_api import Error as PlaywrightError

        target = browser.check(url.strip())
        try:
            browser.page.goto(target, wait_until="domcontentloaded")
        except PlaywrightError as exc:
            if "Timeout" not in str(exc):
                raise
            browser.events.append(
                "the page did not finish loading in time; what has loaded is shown"
            )

    return _act(ctx, go, f"Opened {url.strip()[:200]}")


@tool(toolset=TOOLSET, check=browser_available, max_result_chars=250_000)
def browser_snapshot(ctx: ToolContext) -> ToolResult:
    """The current page as an accessibility tree: roles, names, values and element refs
    such as [ref=e12] to pass to browser_click, browser_type and browser_select."""
    limit = _config(ctx).browser.snapshot_max_chars

    def snap(browser: Browser) -> tuple[str, str, list[str]]:
        page = browser.page
        tree = page.aria_snapshot(mode="ai")
        return page.url, _where(browser) + "\n" + tree, browser.drain_notes()

    url, text, notes = _session(ctx).call(ctx, snap)
    if len(text) > limit:
        cut = text.rfind("\n", 0, limit)
        cut = cut if cut > limit // 2 else limit
        text = (
            text[:cut] + f"\n[snapshot cut at {cut:,} of {len(text):,} characters; scroll or "
            "use browser_wait_for to reach the rest]"
        )
    header = f"[{UNTRUSTED_NOTE}; source: {untrusted_source(url)}]"
    body = scrub("\n".join([header, text, *(f"[{n}]" for n in notes)]), ctx)
    return ToolResult(body, provenance=untrusted(untrusted_source(url)))


@tool(toolset=TOOLSET, check=browser_available)
def browser_click(ctx: ToolContext, ref: str) -> ToolResult:
    """Click an element by its ref from browser_snapshot.

    Args:
        ref: the element ref, e.g. e12
    """
    return _act(ctx, lambda b: _locator(b, ref).click(), f"Clicked {ref}")


@tool(toolset=TOOLSET, check=browser_available)
def browser_type(ctx: ToolContext, ref: str, text: str, submit: Flag = False) -> ToolResult:
    """Type text into a field (replacing what it holds), by its ref from browser_snapshot.

    Args:
        ref: the field's ref, e.g. e5
        text: the text to enter
        submit: press Enter afterwards (submits most forms)
    """

    def type_in(browser: Browser) -> None:
        field = _locator(browser, ref)
        field.fill(text)
        if submit:
            field.press("Enter")

    return _act(ctx, type_in, f"Typed into {ref}" + (" and submitted" if submit else ""))


@tool(toolset=TOOLSET, check=browser_available)
def browser_select(ctx: ToolContext, ref: str, values: list[str]) -> ToolResult:
    """Choose options in a select box by their visible labels or values.

    Args:
        ref: the select box's ref
        values: the option labels (or values) to select
    """

    def select(browser: Browser) -> None:
        field = _locator(browser, ref)
        try:
            field.select_option(label=values, timeout=2000)
        except Exception:
            field.select_option(value=values)

    return _act(ctx, select, f"Selected {', '.join(values)[:200]} in {ref}")


@tool(toolset=TOOLSET, check=browser_available)
def browser_scroll(
    ctx: ToolContext, direction: Literal["down", "up"] = "down", ref: str | None = None
) -> ToolResult:
    """Scroll the page by most of a screen, or bring an element into view.

    Args:
        direction: down or up
        ref: scroll this element into view instead
    """

    def scroll(browser: Browser) -> None:
        if ref:
            _locator(browser, ref).scroll_into_view_if_needed()
            return
        delta = 700 if direction == "down" else -700
        browser.page.mouse.wheel(0, delta)

    return _act(ctx, scroll, f"Scrolled {'to ' + ref if ref else direction}")


@tool(toolset=TOOLSET, check=browser_available)
def browser_back(ctx: ToolContext) -> ToolResult:
    """Go back one page in the current tab's history."""
    return _act(ctx, lambda b: b.page.go_back(wait_until="domcontentloaded"), "Went back")


@tool(toolset=TOOLSET, check=browser_available)
def browser_screenshot(ctx: ToolContext, full_page: Flag = False) -> ToolResult:
    """Save a PNG screenshot of the current page into the working directory
    (screenshots/) and return its path; a model that sees images also gets the
    screenshot itself with the next step.

    Args:
        full_page: the whole scrollable page instead of the visible part
    """

    def shoot(browser: Browser) -> tuple[bytes, str]:
        return browser.page.screenshot(full_page=full_page), browser.page.url

    data, url = _session(ctx).call(ctx, shoot)
    name = time.strftime("shot-%Y%m%d-%H%M%S") + f"-{int(time.time() * 1000) % 1000:03d}.png"
    path = _write_into_workdir(ctx, "screenshots", name, data, tool="browser_screenshot")
    text = f"Saved a screenshot of {url} to {path} ({len(data):,} bytes)."
    # Kept under the home by reference, like an attached image; the engine shows it to a
    # model that sees images. What it shows is the page's content: untrusted.
    return ToolResult(text, provenance=untrusted(f"web:{url}"), images=_kept(ctx, data, name))


def _kept(ctx: ToolContext, data: bytes, name: str) -> tuple[Any, ...]:
    from herald.providers.images import ImageError, store_image

    if ctx.home is None:
        return ()
    limits = (ctx.config or HeraldConfig()).vision
    try:
        ref = store_image(
            data, ctx.home.root, max_edge=limits.max_edge_px, max_bytes=limits.max_bytes, name=name
        )
    except ImageError:  # Pillow missing, or a page too big to shrink: the path still works
        return ()
    return (ref,)


@tool(toolset=TOOLSET, check=browser_available)
def browser_wait_for(
    ctx: ToolContext, text: str | None = None, ref: str | None = None, timeout: Seconds = 10
) -> ToolResult:
    """Wait until some text, or the element with a ref, is visible on the page.

    Args:
        text: text to wait for
        ref: an element ref to wait for
        timeout: seconds to wait at most
    """
    if bool(text) == bool(ref):
        raise BrowserError("give exactly one of text or ref")

    def wait(browser: Browser) -> None:
        target = (
            browser.page.get_by_text(text).first
            if text
            else browser.page.locator(f"aria-ref={ref}")
        )
        target.wait_for(state="visible", timeout=timeout * 1000)

    return _act(ctx, wait, f"Saw {text[:100]!r}" if text else f"Saw {ref}")


@tool(toolset=TOOLSET, check=browser_available)
def browser_close(ctx: ToolContext) -> str:
    """Close the session's browser (its tabs, cookies and storage are discarded)."""
    closed = _session(ctx).close()
    return "Closed the browser." if closed else "No browser was open."


TOOLS: tuple[ToolSpec, ...] = (
    browser_navigate,
    browser_snapshot,
    browser_click,
    browser_type,
    browser_select,
    browser_scroll,
    browser_back,
    browser_screenshot,
    browser_wait_for,
    browser_close,
)
