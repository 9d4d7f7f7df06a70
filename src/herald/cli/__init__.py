"""Command-line surface (L6): `herald`, `herald chat`, sessions, config, doctor."""

import sys


def main() -> None:
    # `herald --version` must stay fast: answer before importing typer or any SDK.
    if sys.argv[1:] in (["--version"], ["-V"]):
        from herald import __version__

        sys.stdout.write(f"herald {__version__}\n")
        return
    # `herald chat -q TEXT` is the one-shot: run it without building the typer app.
    from herald.cli.quick import main_if_oneshot

    if main_if_oneshot(sys.argv[1:]):
        return
    from herald.cli.app import run

    run()
