"""The source-of-truth layer: tests against a real Nautobot (scripts/nautobot-dev), one instance per run shared by
the xdist workers (see sotkit.py). A layer of its own, run after the lab and e2e layers: Nautobot's migrations and
server would otherwise take the CPU from their timing-sensitive tests. The lab helpers of tests/e2e are reused."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))  # labkit

from sotkit import Nautobot, start


@pytest.fixture(scope="session")
def nautobot(tmp_path_factory: pytest.TempPathFactory) -> Nautobot:
    """One real Nautobot for the whole run, shared by the xdist workers."""
    return start(tmp_path_factory.getbasetemp().parent)
