"""Markdown → Telegram HTML for replies: safe escaping, never longer than the input."""

from __future__ import annotations

import pytest

from herald.gateway.platforms.telegram.format import markdown_to_html, utf16_length
from herald.testing.fake_telegram.formatting import parse_html


@pytest.mark.parametrize(
    ("markdown", "html"),
    [
        ("plain & <simple>", "plain &amp; &lt;simple&gt;"),
        ("**bold** and *stars* and _underscores_", "<b>bold</b> and *stars* and _underscores_"),
        ("~~gone~~", "<s>gone</s>"),
        ("run `rm -rf <dir>` now", "run <code>rm -rf &lt;dir&gt;</code> now"),
        ("# Heading", "<b>Heading</b>"),
        ("- one\n* two", "• one\n• two"),
        (
            "[docs](https://example.com/?a=1&b=2)",
            '<a href="https://example.com/?a=1&amp;b=2">docs</a>',
        ),
        (
            "```python\nif a < b:\n    pass\n```",
            '<pre><code class="language-python">if a &lt; b:\n    pass</code></pre>',
        ),
        ("```\nno language\n```", "<pre>no language</pre>"),
        ("```\nunclosed <fence>", "<pre>unclosed &lt;fence&gt;</pre>"),
    ],
)
def test_markdown_renders_as_telegram_html(markdown: str, html: str) -> None:
    assert markdown_to_html(markdown) == html


@pytest.mark.parametrize(
    "text",
    [
        "snake_case_name and __dunder__ stay as written",
        "2*3*4 = 24 and a * b",
        "python3 -c 'print(6*7)'",
        "path/*.py and *.txt",
        "rm -rf *.tmp* _build_ files",
    ],
)
def test_code_like_text_is_not_mangled(text: str) -> None:
    assert parse_html(markdown_to_html(text)) == text


@pytest.mark.parametrize(
    ("markdown", "html"),
    [
        ("``a ` b`` and `c`", "<code>a ` b</code> and <code>c</code>"),
        ("`a``b`", "<code>a``b</code>"),  # closed by a run as long as the opener
        ("``not closed` here", "``not closed` here"),
        ("`` `date` `` shows ticks", "<code>`date`</code> shows ticks"),
        ("run ``echo `date` `` now", "run <code>echo `date` </code> now"),
        ("`   ` is not code", "`   ` is not code"),
        ("[a [docs](https://x.example/p)", '[a <a href="https://x.example/p">docs</a>'),
    ],
)
def test_code_spans_and_links_pair_their_markers(markdown: str, html: str) -> None:
    assert markdown_to_html(markdown) == html


@pytest.mark.parametrize("seed", ["`", "`a ", "[", "[a", "``x`"])
def test_a_line_of_markers_renders_in_one_pass(seed: str) -> None:
    # A reply a hijacked model fills with markers: a line of 4,096 backticks took 2.3 s
    # to render, on the gateway's event loop; fifty of them would take two minutes.
    line = (seed * 4096)[:4096]
    text = "\n".join([line] * 50)
    shown = parse_html(markdown_to_html(text))
    assert shown.replace("`", "") == text.replace("`", "")  # spans only drop their ticks


def test_badly_nested_markers_fall_back_to_escaped_text() -> None:
    text = "**a [b**](https://example.com) <c>"
    assert markdown_to_html(text) == "**a [b**](https://example.com) &lt;c&gt;"


@pytest.mark.parametrize(
    "text",
    [
        "# Title\n\n**bold** `code` [link](https://x.example/path) ~~s~~ _i_ 😀",
        "```js\nconst a = 1 < 2 && 3 > 2;\n```\n- item & more",
        "a & b < c > d " * 50,
    ],
)
def test_rendering_never_makes_the_visible_text_longer(text: str) -> None:
    shown = parse_html(markdown_to_html(text))  # what Telegram displays and measures
    assert utf16_length(shown) <= utf16_length(text)


def test_utf16_length_counts_like_telegram() -> None:
    assert utf16_length("abc") == 3
    assert utf16_length("😀") == 2
    assert utf16_length("👍🏽") == 4  # emoji + skin-tone modifier, both astral
    assert utf16_length("日本") == 2
