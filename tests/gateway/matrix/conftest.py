"""Matrix beyond the contract: the real gateway against a real Synapse, with the contract's
harness (`tests/gateway/contract/matrix_harness.py`) and its `gateway` fixture."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

CONTRACT = str(Path(__file__).resolve().parent.parent / "contract")
if CONTRACT not in sys.path:  # the harness modules import each other by bare name
    sys.path.insert(0, CONTRACT)

from tests.gateway.contract.conftest import gateway  # noqa: E402,F401  (the real gateway)

pytest.importorskip("mautrix")

from matrix_harness import MatrixHarness  # noqa: E402


@pytest.fixture
def harness() -> Iterator[MatrixHarness]:
    made = MatrixHarness()
    made.start()
    try:
        yield made
    finally:
        made.stop()
