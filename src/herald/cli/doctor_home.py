"""`herald doctor`'s checks of a home's formats: config_version and every database's
schema version against this Herald, read without changing anything (herald.homes)."""

from __future__ import annotations

from herald.cli.doctor_entrances import Check

_STATUS = {"current": "ok", "older": "warn", "unknown": "ok", "newer": "fail", "unreadable": "fail"}
_FIX = {
    "older": "nothing to do: it is migrated (after a copy) the next time Herald opens it",
    "newer": "upgrade Herald (pip install -U herald), or restore a backup made by this version",
    "unreadable": "restore it from a backup (herald backup list / restore)",
}


def check_versions(home) -> tuple[list[Check], bool]:
    """(the checks, whether state.db is at this Herald's version and may be opened)."""
    from herald.homes import inspect_home

    checks: list[Check] = []
    state_current = True
    for item in inspect_home(home):
        if item.name == "state.db" and item.status != "current":
            state_current = False
        if item.status == "current":
            detail = f"version {item.found}" if item.found is not None else "fresh"
        else:
            detail = item.detail or f"version {item.found}"
        checks.append(
            Check(f"format {item.name}", _STATUS[item.status], detail, _FIX.get(item.status, ""))
        )
    return checks, state_current
