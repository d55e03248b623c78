"""The ``lab`` fixture of the end-to-end tests (see labkit.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from labkit import lab_fixture

from fabconf_lab.orchestrator import Lab


@pytest.fixture
def lab(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Lab]:
    yield from lab_fixture(tmp_path, monkeypatch)
