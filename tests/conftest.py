"""Shared fixtures: the example inventory, compiled once, and a writable copy of it."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from nightlykit import scratch_dir, service_user  # noqa: F401  (fixtures of the nightly-job tests)
from pristine import EXAMPLE

from fabconf.compile.pipeline import Compiled, compile_inventory

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).resolve().parent / "golden"


def pytest_configure(config: pytest.Config) -> None:
    """The compile cache (``fabconf.compile.cache``) of this test run lives in a directory of its own, never the
    user's ``~/.cache``; labs the tests start inherit it."""
    if not os.environ.get("FABCONF_CACHE_DIR"):
        os.environ["FABCONF_CACHE_DIR"] = tempfile.mkdtemp(prefix="fabconf-test-cache-")


LAYERS = ("unit", "lab", "e2e", "sot")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Each test is marked by the top folder it lives in: ``unit``, ``lab`` (starts simulators), ``e2e`` (drives
    fabconf end to end against the lab) or ``sot`` (against a real Nautobot), so ``pytest -m unit`` is the quick
    layer wherever it is run from."""
    tests = Path(__file__).resolve().parent
    for item in items:
        layer = Path(str(item.fspath)).resolve().relative_to(tests).parts[0]
        if layer in LAYERS:
            item.add_marker(getattr(pytest.mark, layer))


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
    """A compile cache of the test's own, turned on (``fabconf.compile.cache``)."""
    where = tmp_path / "cache"
    monkeypatch.setenv("FABCONF_CACHE_DIR", str(where))
    monkeypatch.delenv("FABCONF_CACHE", raising=False)
    return where
