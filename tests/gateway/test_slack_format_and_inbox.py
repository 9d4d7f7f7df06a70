"""Slack's mrkdwn rendering and the inbound file rules shared by the chat entrances."""

from __future__ import annotations

from pathlib import Path

import pytest

from herald.gateway.inbox import safe_file_name, save_inbound_file
from herald.gateway.platforms.slack.format import markdown_to_mrkdwn


@pytest.mark.parametrize(
    ("markdown", "mrkdwn"),
    [
        ("**bold** and *italic*", "*bold* and _italic_"),
        ("~~gone~~", "~gone~"),
        ("## Title", "*Title*"),
        ("[docs](https://example.org/a)", "<https://example.org/a|docs>"),
        ("a < b & c > d", "a &lt; b &amp; c &gt; d"),
        ("<!channel> hi <@U123>", "&lt;!channel&gt; hi &lt;@U123&gt;"),
        ("`**not bold**` and ```\nx < 1 **y**\n```", "`**not bold**` and ```\nx &lt; 1 **y**\n```"),
    ],
)
def test_markdown_becomes_mrkdwn_with_slack_markup_escaped(markdown: str, mrkdwn: str) -> None:
    assert markdown_to_mrkdwn(markdown) == mrkdwn


@pytest.mark.parametrize(
    ("given", "stored"),
    [
        ("notes.txt", "notes.txt"),
        ("../../.ssh/authorized_keys", "authorized_keys"),
        ("..\\..\\evil.bat", "evil.bat"),
        (".bashrc", "bashrc"),
        ("a/b/c.py", "c.py"),
        ("x;rm -rf ~.sh", "x_rm -rf _.sh"),
        ("...", "attachment"),
    ],
)
def test_platform_file_names_become_plain_base_names(given: str, stored: str) -> None:
    assert safe_file_name(given) == stored


def test_a_taken_name_gets_a_sibling_and_a_symlink_is_never_followed(tmp_path: Path) -> None:
    folder = tmp_path / "attachments"
    first = save_inbound_file(folder, "notes.txt", b"one")
    second = save_inbound_file(folder, "notes.txt", b"two")
    assert (first.name, second.name) == ("notes.txt", "notes-1.txt")
    target = tmp_path / "elsewhere.txt"
    (folder / "trap.txt").symlink_to(target)
    saved = save_inbound_file(folder, "trap.txt", b"data")
    assert saved.name == "trap-1.txt" and not target.exists()
