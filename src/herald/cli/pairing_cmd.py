"""`herald pairing list|approve CODE|revoke USER`: who may talk to Herald through the
gateway's chat platforms (see herald.gateway.pairing)."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Annotated

import typer

from herald.cli.common import fail, load, refuse_from_tool_call, write_stdout

if TYPE_CHECKING:
    from herald.config import Settings
    from herald.gateway.pairing import ApprovedUser, PairingStore

app = typer.Typer(
    help="Approve strangers who asked the gateway for access, list and revoke them.",
    no_args_is_help=True,
)


def pairing_store(settings: Settings) -> PairingStore:
    from herald.gateway.pairing import PairingStore, pairing_path

    return PairingStore(
        pairing_path(settings.home.root), ttl=settings.config.gateway.pairing_code_ttl_seconds
    )


def approve_code(settings: Settings, code: str) -> ApprovedUser:
    """What `herald pairing approve CODE` does (PairingError for an unknown code)."""
    return pairing_store(settings).approve(code)


def _when(ts: float) -> str:
    return datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M")


@app.command("list")
def list_pairings(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
) -> None:
    """Pending pairing codes and approved users."""
    store = pairing_store(load(ctx))
    pending, approved = store.pending(), store.approved()
    if as_json:
        from herald.cli.tables import print_json

        print_json({
            "pending": [
                {"code": r.code, "platform": r.platform, "user_id": r.user_id,
                 "user_name": r.user_name, "expires_at": r.expires_at}
                for r in pending
            ],
            "approved": [{"user": u.label, "approved_at": u.approved_at} for u in approved],
        })  # fmt: skip
        return
    lines = ["pending:"]
    lines += [
        f"  {req.code}  {req.platform}:{req.user_id}"
        + (f" (@{req.user_name})" if req.user_name else "")
        + f"  expires {_when(req.expires_at)}"
        for req in pending
    ] or ["  (none)"]
    lines.append("approved:")
    lines += [f"  {user.label}  since {_when(user.approved_at)}" for user in approved] or [
        "  (none)"
    ]
    write_stdout("\n".join(lines) + "\n")


@app.command("approve")
def approve(
    ctx: typer.Context,
    code: Annotated[str, typer.Argument(help="the code the user received")],
) -> None:
    """Let the user who received CODE talk to Herald."""
    from herald.gateway.pairing import PairingError

    refuse_from_tool_call(f"herald pairing approve {code}")
    try:
        user = approve_code(load(ctx), code)
    except PairingError as exc:
        fail(str(exc).strip("'\""))
    write_stdout(f"approved {user.label}; their next message gets an answer\n")


@app.command("revoke")
def revoke(
    ctx: typer.Context,
    user: Annotated[str, typer.Argument(help="platform:user_id, user_id or @name")],
) -> None:
    """Take an approved user's access away."""
    from herald.gateway.pairing import PairingError

    try:
        removed = pairing_store(load(ctx)).revoke(user)
    except PairingError as exc:
        fail(str(exc).strip("'\""))
    write_stdout("".join(f"revoked {u.label}\n" for u in removed))
