"""Command-line surface (L6): `herald`, `herald chat`, sessions, config, doctor."""


def main() -> None:
    from herald.cli.app import run

    run()
