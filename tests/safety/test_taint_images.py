"""An untrusted image the model saw is opaque evidence for the taint rule: it may say any
value, so after it a control value counts as its unless the owner gave it, or trusted
content did first."""

from __future__ import annotations

from herald.safety.provenance import OWNER, TRUSTED
from herald.safety.taint import Evidence, find_taint

PAGE = "untrusted:web:https://shop.example/orders"
PATH = "/home/me/notes/exfil-7q2.txt"


def _taint(evidence: list[Evidence], value: str = PATH):
    return find_taint("write_file", {"path": value}, ["path"], evidence)


def test_a_value_no_text_said_is_the_images_after_an_untrusted_image() -> None:
    taint = _taint([Evidence("summarise the page", OWNER), Evidence.image(PAGE)])
    assert taint is not None and taint.source == PAGE.removeprefix("untrusted:")
    # a short value (an id) too
    assert _taint([Evidence("hi", OWNER), Evidence.image(PAGE)], "4417") is not None


def test_the_owner_naming_it_or_trusted_content_before_the_image_clears_it() -> None:
    assert _taint([Evidence.image(PAGE), Evidence(f"save it to {PATH}", OWNER)]) is None
    assert _taint([Evidence(f"config: {PATH}", TRUSTED), Evidence.image(PAGE)]) is None
    # trusted content after the image may be the model echoing it: it clears nothing
    assert _taint([Evidence.image(PAGE), Evidence(f"wrote {PATH}", TRUSTED)]) is not None


def test_without_an_image_an_unsaid_value_is_not_tainted() -> None:
    assert _taint([Evidence("summarise the page", OWNER), Evidence("prices", PAGE)]) is None
