"""A name a sender can choose is never an identity: allowlists and pairing match
platform ids (and handles the platform keeps unique), not display names."""

from __future__ import annotations

from herald.gateway.auth import allowlist_matches
from herald.gateway.platforms.slack.events import event_from_action, event_from_command


def test_a_slack_slash_command_with_an_allowlisted_name_is_not_that_person() -> None:
    event = event_from_command(
        {
            "channel_id": "D123",
            "user_id": "U999",
            "user_name": "kerry",
            "command": "/herald",
            "text": "status",
            "team_id": "T1",
            "trigger_id": "t1",
        }
    )
    assert not allowlist_matches(["@kerry"], event)
    assert allowlist_matches(["U999"], event)


def test_a_slack_button_press_with_an_allowlisted_name_is_not_that_person() -> None:
    body = {
        "channel": {"id": "D123"},
        "user": {"id": "U999", "username": "kerry"},
        "message": {"ts": "1.2"},
        "team": {"id": "T1"},
        "trigger_id": "t2",
    }
    event = event_from_action(body, {"value": "/approve"})
    assert not allowlist_matches(["@kerry"], event)
    assert allowlist_matches(["U999"], event)
