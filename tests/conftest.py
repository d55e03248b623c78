"""Shared fixtures: the example inventory, compiled once, and a writable copy of it."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from fabconf.pipeline import Compiled, compile_inventory

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "inventory"
GOLDEN = Path(__file__).resolve().parent / "golden"


def pytest_configure(config: pytest.Config) -> None:
    """The compile cache (``fabconf.cache``) of this test run lives in a directory of its own, never the user's
    ``~/.cache``; labs the tests start inherit it."""
    if not os.environ.get("FABCONF_CACHE_DIR"):
        os.environ["FABCONF_CACHE_DIR"] = tempfile.mkdtemp(prefix="fabconf-test-cache-")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark by folder: ``pytest -m "not lab and not e2e"`` is the quick unit layer (a few seconds)."""
    for item in items:
        parts = Path(str(item.fspath)).parts
        if "e2e" in parts:
            item.add_marker(pytest.mark.e2e)
            item.add_marker(pytest.mark.lab)
        elif "lab" in parts or "drivers" in parts:
            item.add_marker(pytest.mark.lab)


@pytest.fixture(scope="session")
def example() -> Compiled:
    return compile_inventory(EXAMPLE)


TWO_PODS = ROOT / "examples" / "two-pods"


@pytest.fixture(scope="session")
def two_pods() -> Compiled:
    """The three-tier example: two pods, two super-spines, dual-homed and rail-optimised hosts."""
    return compile_inventory(TWO_PODS)


@pytest.fixture
def inventory_copy(tmp_path: Path) -> Path:
    target = tmp_path / "inventory"
    shutil.copytree(EXAMPLE, target)
    return target


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A compile cache of the test's own, turned on (``fabconf.cache``)."""
    where = tmp_path / "cache"
    monkeypatch.setenv("FABCONF_CACHE_DIR", str(where))
    monkeypatch.delenv("FABCONF_CACHE", raising=False)
    return where
