"""Shared fixtures: the example inventory, compiled once, and a writable copy of it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from fabconf.pipeline import Compiled, compile_inventory

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "inventory"
GOLDEN = Path(__file__).resolve().parent / "golden"


@pytest.fixture(scope="session")
def example() -> Compiled:
    return compile_inventory(EXAMPLE)


@pytest.fixture
def inventory_copy(tmp_path: Path) -> Path:
    target = tmp_path / "inventory"
    shutil.copytree(EXAMPLE, target)
    return target
