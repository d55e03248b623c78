"""The lab as the command line runs it, for the lab tests that drive ``fabconf lab …``: a ``fabconf`` helper and a
``lab`` fixture (a lab of the example on a network of its own, stopped afterwards)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from network import free_network
from pristine import EXAMPLE

ROOT = Path(__file__).resolve().parent.parent


def fabconf(*args: str, **run: Any) -> subprocess.CompletedProcess[str]:
    """``python -m fabconf ARGS`` from the checkout's root; ``run``: more of subprocess.run's options
    (``preexec_fn``, ``env``)."""
    return subprocess.run(
        [sys.executable, "-m", "fabconf", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=240,
        check=False,
        **run,
    )


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    state, network = tmp_path / "lab", free_network()
    up = fabconf("lab", "up", "-i", str(EXAMPLE), "--state", str(state), "--network", network)
    assert up.returncode == 0, up.stderr
    try:
        yield state, network
    finally:
        fabconf("lab", "down", "--state", str(state))
