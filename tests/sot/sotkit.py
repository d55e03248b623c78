"""Shared by the source-of-truth tests: one real Nautobot per test run, started by scripts/nautobot-dev.

``.ci/run`` starts it before pytest and exports FABCONF_NAUTOBOT_URL and FABCONF_NAUTOBOT_TOKEN; without them the
first xdist worker to get here starts (or reuses) the instance in FABCONF_NAUTOBOT_STATE (default
/tmp/fabconf-nautobot-dev-UID) under a file lock, and the others wait for it and read the same two lines. An
instance this run started is stopped when the run ends (by the controller, after every worker: ``STARTED`` names a
file the starting worker writes the state directory into); one that was already up is left as it was.
FABCONF_NAUTOBOT_KEEP=1 keeps the one it started running, for a faster next run (its migrations take minutes;
`scripts/nautobot-dev down --state DIR` stops it). The tests skip where PostgreSQL or Redis is not installed.
Each test works in a Location (fabric name) of its own, so the tests share the database without resetting it.
"""

from __future__ import annotations

import fcntl
import glob
import os
import shutil
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "nautobot-dev"
STARTED = "FABCONF_TEST_NAUTOBOT_STARTED"  # the file that names the instance this run started, to stop at its end


@dataclass(frozen=True)
class Nautobot:
    url: str
    token: str


def _lines(text: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in text.splitlines() if line.startswith("FABCONF_NAUTOBOT_"))


def start(lock_dir: Path) -> Nautobot:
    url, token = os.environ.get("FABCONF_NAUTOBOT_URL"), os.environ.get("FABCONF_NAUTOBOT_TOKEN")
    if url and token:
        return Nautobot(url, token)
    if not glob.glob("/usr/lib/postgresql/*/bin/initdb") or not shutil.which("redis-server"):
        pytest.skip("PostgreSQL or Redis is not installed (apt-get install postgresql redis-server)")
    state = Path(os.environ.get("FABCONF_NAUTOBOT_STATE") or f"/tmp/fabconf-nautobot-dev-{os.getuid()}")
    with open(lock_dir / "nautobot-dev.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one worker starts it, the others wait and reuse it
        was_up = _run("status", state).returncode == 0
        done = _run("up", state)
        marker = os.environ.get(STARTED)
        if not was_up and marker and done.returncode == 0:
            Path(marker).write_text(str(state))
    assert done.returncode == 0, done.stderr[-3000:]
    found = _lines(done.stdout)
    return Nautobot(found["FABCONF_NAUTOBOT_URL"], found["FABCONF_NAUTOBOT_TOKEN"])


def _run(command: str, state: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), command, "--state", str(state)], capture_output=True, text=True, check=False
    )


def stop_started(marker: Path) -> None:
    """Stop the instance this run started (``marker`` names its state directory), unless FABCONF_NAUTOBOT_KEEP;
    ``marker``'s private directory is removed."""
    state = marker.read_text().strip() if marker.exists() else ""
    shutil.rmtree(marker.parent, ignore_errors=True)
    if state and not os.environ.get("FABCONF_NAUTOBOT_KEEP"):
        _run("down", Path(state))


def fabric_copy(source: Path, target: Path, files: tuple[str, ...] | None = None) -> tuple[Path, str]:
    """A copy of an example inventory under a fabric name (a Nautobot Location) of its own."""
    target.mkdir(parents=True)
    for path in source.iterdir():
        if path.is_file() and (files is None or path.name in files):
            shutil.copy(path, target / path.name)
    name = f"t-{uuid.uuid4().hex[:10]}"
    fabric = target / "fabric.yaml"
    lines = fabric.read_text().splitlines(keepends=True)
    fabric.write_text("".join(f"name: {name}\n" if ln.startswith("name:") else ln for ln in lines))
    return target, name


def rename(directory: Path, name: str) -> None:
    """fabric.yaml of ``directory`` named ``name`` (another copy of the same fabric)."""
    fabric = directory / "fabric.yaml"
    lines = fabric.read_text().splitlines(keepends=True)
    fabric.write_text("".join(f"name: {name}\n" if ln.startswith("name:") else ln for ln in lines))
    assert yaml.safe_load(fabric.read_text())["name"] == name


def rendered(directory: Path, out: Path) -> dict[str, bytes]:
    """Every device's rendered configuration, by file name."""
    from fabconf.cli import main

    assert main(["render", "-i", str(directory), "-o", str(out)]) == 0
    return {p.name: p.read_bytes() for p in sorted(out.iterdir())}
