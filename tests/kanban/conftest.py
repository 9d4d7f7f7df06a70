"""Boards for the kanban tests: the same tests run on SQLite and on a real PostgreSQL
server the session starts (one per xdist worker: its own port and directory)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from herald.kanban import Board


class Clock:
    """A hand-driven clock: lease expiry is tested without sleeping."""

    def __init__(self, start: float = 1_000_000.0):
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture(scope="session")
def pg_server() -> Iterator[object]:
    from herald.testing.postgres import PostgresServer, PostgresUnavailable, find_server_binaries

    try:
        import psycopg  # noqa: F401
    except ImportError:
        pytest.skip("psycopg is not installed (pip install 'herald[kanban]')")
    try:
        find_server_binaries()
    except PostgresUnavailable as exc:
        pytest.skip(f"no PostgreSQL server for the postgres backend tests: {exc}")
    server = PostgresServer().start()  # binaries that are there but fail: an error, not a skip
    yield server
    server.stop()


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def board_factory(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path, clock: Clock
) -> Iterator[Callable[..., Board]]:
    """Opens boards on one store (each call: a new connection, as another process would)."""
    opened: list[Board] = []
    if backend == "postgres":
        from herald.kanban.postgres_board import PostgresBoard

        dsn = request.getfixturevalue("pg_server").new_schema_dsn()

        def make(**kw: object) -> Board:
            board = PostgresBoard(dsn, clock=kw.pop("clock", clock), **kw)  # type: ignore[arg-type]
            opened.append(board)
            return board
    else:
        from herald.kanban.sqlite_board import SqliteBoard

        def make(**kw: object) -> Board:
            board = SqliteBoard(tmp_path / "kanban.db", clock=kw.pop("clock", clock), **kw)  # type: ignore[arg-type]
            opened.append(board)
            return board

    yield make
    for board in opened:
        board.close()


@pytest.fixture
def board(board_factory: Callable[..., Board]) -> Board:
    return board_factory()


@pytest.fixture
def kanban_home(tmp_path: Path, fake_llm, monkeypatch: pytest.MonkeyPatch):
    """`make(kanban={...}, root=...)`: a home wired to the fake LLM with a kanban section;
    HERALD_HOME points at the (last) home, so subprocesses use it too."""
    from herald.testing.homes import fake_model_config, make_home, merge

    def make(root: Path | None = None, **sections: object):
        root = root or tmp_path / "home"
        config = merge(fake_model_config(fake_llm), {k: v for k, v in sections.items()})
        monkeypatch.setenv("HERALD_HOME", str(root))
        return make_home(root, config)

    return make
