"""The model's Markdown as Matrix HTML: formatting kept, anything a hijacked model could
make a client do (raw HTML, pills, images fetched from a server of its choosing) not."""

from __future__ import annotations

from typing import Any

from herald.gateway.platforms.matrix.format import with_html


def render(text: str) -> dict[str, Any]:
    return with_html({"msgtype": "m.text", "body": text}, text)


def test_markdown_becomes_html_beside_the_plain_body() -> None:
    content = render("**done**: see `report.csv`")
    assert content["body"] == "**done**: see `report.csv`"
    assert content["format"] == "org.matrix.custom.html"
    assert "<strong>done</strong>" in content["formatted_body"]
    assert "<code>report.csv</code>" in content["formatted_body"]


def test_plain_prose_has_no_formatted_copy() -> None:
    assert "formatted_body" not in render("just a sentence")


def test_raw_html_and_images_from_the_model_are_not_rendered() -> None:
    hostile = (
        '<a href="https://matrix.to/#/@room">@room</a> <img src="https://evil.example/p.gif">'
        " ![pixel](https://evil.example/t.gif)"
    )
    html = render(hostile)["formatted_body"]
    assert "<img" not in html and '<a href="https://matrix.to' not in html
    assert "&lt;img" in html  # shown as text
