"""web_extract against pages served on 127.0.0.1."""

from __future__ import annotations

import gzip
import json
import tracemalloc
import zlib
from collections.abc import Iterator
from typing import Any

import pytest
from test_web_support import LocalHTTPServer, Recorded

from herald.config import HeraldConfig, Secrets
from herald.config.schema_web import WebConfig
from herald.tools.registry import ERROR_PREFIX, ToolContext, ToolRegistry
from herald.tools.web import register as register_web
from herald.tools.web.html_text import html_to_markdown

ARTICLE = """<!doctype html>
<html><head><title>Release notes</title><style>body { color: red }</style>
<script>document.write("tracking")</script></head>
<body>
<header><nav><a href="/">Home</a> | <a href="/blog">Blog</a></nav></header>
<main>
  <h1>Herald 1.0</h1>
  <p>Read the <a href="/docs/install">install guide</a> or the
     <a href="https://other.example/faq">FAQ</a>.</p>
  <h2>Changes</h2>
  <ul><li>New <code>patch</code> tool</li><li>Faster search</li></ul>
  <button>Subscribe</button>
</main>
<footer>Copyright footer text</footer>
</body></html>
"""


@pytest.fixture
def server() -> Iterator[LocalHTTPServer]:
    with LocalHTTPServer() as srv:
        srv.route("/article", body=ARTICLE, content_type="text/html; charset=utf-8")
        yield srv


@pytest.fixture
def reg() -> ToolRegistry:
    r = ToolRegistry()
    register_web(r)
    return r


def make_ctx(secrets: dict[str, str] | None = None, **web: Any) -> ToolContext:
    web.setdefault("allow_private_networks", True)  # the test server is on loopback
    return ToolContext(
        config=HeraldConfig(web=WebConfig(**web)), secrets=Secrets(environ=secrets or {})
    )


def extract(reg: ToolRegistry, ctx: ToolContext, url: str) -> tuple[bool, str]:
    result = reg.dispatch("web_extract", json.dumps({"url": url}), ctx)
    return result.is_error, result.content


def test_html_becomes_markdown_with_headings_and_absolute_links(reg, server):
    failed, out = extract(reg, make_ctx(), server.url + "/article")
    assert not failed, out
    lines = out.split("\n")
    assert lines[0].startswith("[untrusted web content") and server.url + "/article" in lines[0]
    assert lines[1] == "Title: Release notes"
    assert "# Herald 1.0" in out and "## Changes" in out
    assert f"[install guide]({server.url}/docs/install)" in out
    assert "[FAQ](https://other.example/faq)" in out
    assert "- New `patch` tool" in out
    for chrome in ("tracking", "color: red", "Blog", "Copyright footer", "Subscribe"):
        assert chrome not in out


def test_charset_from_header_and_from_meta(reg, server):
    server.route(
        "/latin",
        body="<p>café crème</p>".encode("latin-1"),
        content_type="text/html; charset=ISO-8859-1",
    )
    server.route(
        "/meta",
        body='<html><head><meta charset="windows-1252"></head><body><p>naïve “quotes”</p></body></html>'.encode(
            "cp1252"
        ),
        content_type="text/html",
    )
    server.route("/plain", body="Grüße".encode("utf-16"), content_type="text/plain")
    assert "café crème" in extract(reg, make_ctx(), server.url + "/latin")[1]
    assert "naïve “quotes”" in extract(reg, make_ctx(), server.url + "/meta")[1]
    assert "Grüße" in extract(reg, make_ctx(), server.url + "/plain")[1]


def test_text_and_json_pass_through(reg, server):
    server.route("/data.json", body='{"a": [1, 2]}', content_type="application/json")
    server.route("/notes.txt", body="# not a heading\n<b>raw</b>", content_type="text/plain")
    out = extract(reg, make_ctx(), server.url + "/data.json")[1]
    assert out.endswith('{"a": [1, 2]}')
    text = extract(reg, make_ctx(), server.url + "/notes.txt")[1]
    assert text.endswith("# not a heading\n<b>raw</b>")


def test_download_size_cap(reg, server):
    server.route("/huge", body="word " * 200_000, content_type="text/plain")
    failed, out = extract(reg, make_ctx(extract_max_bytes=4096), server.url + "/huge")
    assert not failed and "download stopped at 4,096 bytes" in out
    assert len(out) < 6000


def test_output_character_cap(reg, server):
    body = "".join(f"<p>paragraph {i} with some words</p>" for i in range(2000))
    server.route("/long", body=body, content_type="text/html")
    failed, out = extract(reg, make_ctx(extract_max_chars=2000), server.url + "/long")
    assert not failed and "[text cut at" in out and len(out) < 2600


@pytest.mark.parametrize(
    "url",
    ["ftp://example.com/file", "file:///tmp/x.txt", "example.com/page", "javascript:alert(1)"],
)
def test_non_http_urls_are_refused(reg, url):
    failed, out = extract(reg, make_ctx(), url)
    assert failed and "only http and https" in out


def test_redirects_followed_within_the_limit(reg, server):
    server.route("/old", status=301, location="/article")
    failed, out = extract(reg, make_ctx(), server.url + "/old")
    assert not failed and "redirected from" in out and "# Herald 1.0" in out


def test_redirect_limit(reg, server):
    def hop(request: Recorded) -> tuple[int, dict[str, str], bytes]:
        n = int(request.path.rsplit("/", 1)[-1])
        return 302, {"Location": f"/loop/{n + 1}"}, b""

    for n in range(10):
        server.routes[f"/loop/{n}"] = hop
    failed, out = extract(reg, make_ctx(max_redirects=3), server.url + "/loop/0")
    assert failed and "too many redirects (more than 3)" in out
    assert len([r for r in server.requests if r.path.startswith("/loop/")]) == 4


def test_redirect_to_another_scheme_is_refused(reg, server):
    server.route("/sneaky", status=302, location="file:///etc/hostname")
    failed, out = extract(reg, make_ctx(), server.url + "/sneaky")
    assert failed and "only http and https" in out


def test_http_errors_are_error_results(reg, server):
    failed, out = extract(reg, make_ctx(), server.url + "/missing")
    assert failed and out.startswith(ERROR_PREFIX) and "HTTP 404" in out and "does not exist" in out
    server.route("/boom", status=500, body="oops")
    assert "HTTP 500" in extract(reg, make_ctx(), server.url + "/boom")[1]


def test_binary_content_is_refused(reg, server):
    server.route("/img", body=b"\x89PNG\r\n\x1a\n\x00\x00", content_type="image/png")
    failed, out = extract(reg, make_ctx(), server.url + "/img")
    assert failed and "image/png" in out


def test_private_addresses_refused_by_default(reg, server):
    failed, out = extract(reg, make_ctx(allow_private_networks=False), server.url + "/article")
    assert failed and "127.0.0.1" in out and "web.allow_private_networks" in out
    assert server.requests == []


def test_secrets_in_pages_are_masked(reg, server):
    secret = "brave-live-secret-987654"
    server.route(
        "/leak",
        body=f"<p>token {secret} and sk-proj-abcdefghij0123456789klmnop</p>",
        content_type="text/html",
    )
    out = extract(reg, make_ctx({"BRAVE_API_KEY": secret}), server.url + "/leak")[1]
    assert secret not in out and "abcdefghij0123456789" not in out and "[REDACTED]" in out


def test_page_without_text_says_so(reg, server):
    server.route(
        "/spa",
        body="<html><body><div id=app></div><script>x()</script></body></html>",
        content_type="text/html",
    )
    out = extract(reg, make_ctx(), server.url + "/spa")[1]
    assert "no readable text" in out and "JavaScript" in out


def test_registered_parallel_safe_in_web_toolset(reg):
    spec = reg.get("web_extract")
    assert spec is not None and spec.parallel_safe and spec.toolset == "web"
    assert spec.check_fn is None and spec.requires_env == ()


def test_schema_comes_from_the_signature(reg):
    params = reg.get("web_extract").definition()["function"]["parameters"]
    assert params["required"] == ["url"] and params["properties"] == {"url": {"type": "string"}}


def test_bad_arguments_get_clear_errors(reg):
    def error(args: dict[str, Any]) -> str:
        result = reg.dispatch("web_extract", args, make_ctx())
        assert result.is_error and result.content.startswith(ERROR_PREFIX)
        return result.content

    assert "url is required" in error({})
    assert "url must be a string, got a list" in error({"url": ["https://a.example/"]})
    assert "'timeout' is not an argument of web_extract" in error({"url": "x", "timeout": 3})
    assert "url must be a non-empty http(s) URL" in error({"url": "  "})


def test_a_page_padded_with_whitespace_is_read_in_one_pass(reg, server):
    # A hostile (or badly generated) page: 300,000 spaces and tabs in a paragraph and
    # in a <pre>. The converter read such runs again from each of their characters:
    # 80,000 took 47-73 s, so this page would hold the turn for a quarter of an hour.
    pad = " \t" * 150_000
    body = (
        f"<html><body><main><p>before{pad}after <code>x{pad}y</code></p>"
        f"<pre>\n{' ' * 300_000}code\n</pre><p>end</p></main></body></html>"
    )
    server.route("/padded", body=body, content_type="text/html")
    failed, out = extract(reg, make_ctx(), server.url + "/padded")
    assert not failed, out[:300]
    assert "before after" in out  # running text: the run is one space, as before
    assert "`x y`" in out  # inline code too: markdownify squeezes it as well
    _title, text = html_to_markdown(body, server.url)
    assert " " * 300_000 + "code" in text  # preformatted text keeps its spaces
    assert text.endswith("end")


def _deflated(data: bytes, wbits: int) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, wbits)
    return packer.compress(data) + packer.flush()


@pytest.mark.parametrize(
    ("coding", "pack"),
    [
        ("gzip", gzip.compress),
        ("x-gzip", gzip.compress),
        ("deflate", lambda data: _deflated(data, zlib.MAX_WBITS)),
        ("deflate", lambda data: _deflated(data, -zlib.MAX_WBITS)),  # without its header
        ("identity", lambda data: data),
    ],
)
def test_a_compressed_page_is_unpacked(reg, server, coding, pack):
    server.route(
        "/packed",
        body=pack(ARTICLE.encode()),
        content_type="text/html; charset=utf-8",
        content_encoding=coding,
    )
    failed, out = extract(reg, make_ctx(), server.url + "/packed")
    assert not failed, out[:300]
    assert "# Herald 1.0" in out and "Faster search" in out
    assert server.requests[-1].headers["accept-encoding"] == "gzip, deflate"


@pytest.mark.parametrize("coding", ["gzip", "deflate"])
def test_a_page_that_unpacks_to_far_more_than_the_cap_is_cut_while_unpacking(reg, server, coding):
    # 64 MiB of one letter packs into about 64 KB. httpx unpacked each chunk it read
    # whole, so memory grew by the whole 64 MiB before the cap was looked at (and 32 KB
    # of zstd, which it also read, unpacks to a gibibyte).
    packer = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16 if coding == "gzip" else 15)
    block = b"a" * (1 << 20)
    bomb = b"".join(packer.compress(block) for _ in range(64)) + packer.flush()
    assert len(bomb) < 100_000
    server.route("/bomb", body=bomb, content_type="text/plain", content_encoding=coding)
    tracemalloc.start()
    try:
        failed, out = extract(reg, make_ctx(extract_max_bytes=1 << 20), server.url + "/bomb")
        _now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert not failed, out[:300]
    assert "download stopped at 1,048,576 bytes" in out
    assert peak < 16 << 20, f"{peak:,} bytes at the peak"


@pytest.mark.parametrize("coding", ["zstd", "br", "compress", "gzip, gzip", "x-custom"])
def test_a_coding_herald_did_not_ask_for_is_refused(reg, server, coding):
    # zstd's frame magic and then anything: the body is never unpacked
    server.route(
        "/odd", body=b"\x28\xb5\x2f\xfd" + b"\0" * 64, content_type="text/html",
        content_encoding=coding,
    )  # fmt: skip
    failed, out = extract(reg, make_ctx(), server.url + "/odd")
    assert failed and f"encoded as {coding!r}" in out and "gzip, deflate" in out


def test_a_corrupt_compressed_page_is_an_error_that_says_so(reg, server):
    # a gzip header, then a block of the type deflate does not have (0b11)
    body = gzip.compress(ARTICLE.encode())[:10] + b"\x07" + b"\0" * 40
    server.route("/broken", body=body, content_type="text/html",
                 content_encoding="gzip")  # fmt: skip
    failed, out = extract(reg, make_ctx(), server.url + "/broken")
    assert failed and "gzip data is corrupt" in out
