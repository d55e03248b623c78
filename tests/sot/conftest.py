"""The source-of-truth layer: tests against a real Nautobot (scripts/nautobot-dev), one instance per run shared by
the xdist workers (see sotkit.py). A layer of its own, run after the lab and e2e layers: Nautobot's migrations and
server would otherwise take the CPU from their timing-sensitive tests. The lab helpers of tests/e2e are reused."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))  # labkit

from sotkit import STARTED, Nautobot, start, stop_started


def pytest_configure(config: pytest.Config) -> None:
    """The controller (or a run without xdist) names the file in which the worker that starts Nautobot says so;
    the workers inherit it."""
    if not hasattr(config, "workerinput") and STARTED not in os.environ:
        private = tempfile.mkdtemp(prefix="fabconf-test-nautobot-")  # 0700: the file in it is written only once
        os.environ[STARTED] = os.path.join(private, "started")


def pytest_unconfigure(config: pytest.Config) -> None:
    """At the run's end, on the controller: stop what this run started (sotkit.py)."""
    if not hasattr(config, "workerinput") and os.environ.get(STARTED):
        stop_started(Path(os.environ.pop(STARTED)))


@pytest.fixture(scope="session")
def nautobot(tmp_path_factory: pytest.TempPathFactory) -> Nautobot:
    """One real Nautobot for the whole run, shared by the xdist workers."""
    return start(tmp_path_factory.getbasetemp().parent)
