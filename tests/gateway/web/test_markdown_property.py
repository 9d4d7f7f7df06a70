"""The web chat's Markdown renderer, run in node exactly as the page ships it: whatever a
model reply says, the HTML it renders has no event-handler attribute, no tag or
attribute the renderer does not itself make, and no link that is not http(s) or mailto
(issue 30: the autolink pass used to re-match inside a link's href)."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from html.parser import HTMLParser
from importlib import resources

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed")

# Reads one JSON string per line, answers one JSON string (the rendered HTML) per line.
_DRIVER = """
const fs = require("fs"), readline = require("readline");
global.window = {};
eval(fs.readFileSync(process.argv[1], "utf8"));
const rl = readline.createInterface({ input: process.stdin });
rl.on("line", (line) => {
  process.stdout.write(JSON.stringify(window.HeraldMarkdown.render(JSON.parse(line))) + "\\n");
});
"""

TAGS = {
    "p", "br", "a", "code", "pre", "span", "strong", "em", "del", "ul", "ol", "li",
    "blockquote", "h3", "h4", "h5", "h6",
}  # fmt: skip
ATTRIBUTES = {"href", "target", "rel", "class", "data-lang"}
LINK_SCHEMES = ("http://", "https://", "mailto:")

FRAGMENTS = [
    "[", "]", "(", ")", "](", "http://", "https://", "mailto:", "javascript:", "`", "```",
    "*", "**", "~~", '"', "'", "<", ">", "&", "&quot;", "onmouseover=", "alert(1)", " ",
    "\n", "# ", "- ", "1. ", "> ", "a", "x.y/", "=", "/", "\x00", "\x000\x00", "<a href=",
    "style=", "<br>", "\t", "](http://", "(http://", " http://", "[a", "b)",
]  # fmt: skip
noise = st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=4))
# Well-formed links and bare URLs whose insides are noise too: random fragments alone
# almost never assemble a link, and the passes' interplay lives inside links.
url = st.builds(
    "{}{}".format,
    st.sampled_from(["http://", "https://", "mailto:", "javascript:"]),
    st.lists(noise, max_size=6).map("".join),
)
link = st.builds("[{}]({})".format, st.lists(noise, min_size=1, max_size=4).map("".join), url)
bare = st.builds("{}{}".format, st.sampled_from([" ", "(", ""]), url)
markdown = st.lists(st.one_of(noise, link, bare), max_size=30).map("".join)


class _Renderer:
    def __init__(self) -> None:
        script = resources.files("herald.gateway.platforms.web") / "static" / "markdown.js"
        self.proc = subprocess.Popen(
            [str(NODE), "-e", _DRIVER, str(script)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )

    def render(self, source: str) -> str:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(source) + "\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


@pytest.fixture(scope="module")
def renderer() -> Iterator[_Renderer]:
    r = _Renderer()
    yield r
    r.close()


class _Markup(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in TAGS:
            self.problems.append(f"tag <{tag}>")
        for name, value in attrs:
            if name.startswith("on") or name not in ATTRIBUTES:
                self.problems.append(f"attribute {name}={value!r} on <{tag}>")
            if name == "href" and not (value or "").lower().startswith(LINK_SCHEMES):
                self.problems.append(f"link {value!r}")


def problems(html: str) -> list[str]:
    parser = _Markup()
    parser.feed(html)
    parser.close()
    return parser.problems


@pytest.mark.parametrize(
    "source",
    [
        "[x](http://a/(http://b/onmouseover=alert(1)//)",  # the audit's reply
        "[ http://q](http://a)",
        '[a](http://x"onmouseover="alert(1))',
        "[a](javascript:alert(1))",
        "<img src=x onerror=alert(1)>",
        "`http://a` [b](http://c/`x`)",
    ],
)
def test_known_attacks_render_inert(renderer: _Renderer, source: str) -> None:
    html = renderer.render(source)
    assert problems(html) == [], html


def test_links_and_emphasis_still_render(renderer: _Renderer) -> None:
    html = renderer.render("**b** see http://x.y/z and [l *i*](mailto:a@b) `c`")
    assert (
        '<a href="http://x.y/z" target="_blank" rel="noopener noreferrer">http://x.y/z</a>' in html
    )
    assert '<a href="mailto:a@b" target="_blank" rel="noopener noreferrer">l <em>i</em></a>' in html
    assert "<strong>b</strong>" in html and "<code>c</code>" in html


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(source=markdown)
def test_no_markdown_renders_a_handler_or_a_foreign_link(renderer: _Renderer, source: str) -> None:
    html = renderer.render(source)
    assert problems(html) == [], (source, html)
