"""Onboarding rehearsed against the running lab, as the docs tell an operator to run it:

    fabconf lab up -i inventory
    fabconf run tasks/onboard-rack.yaml -e rack=rack9 -e pod=pod1 --check --lab

The rack is onboarded into a scratch copy of the inventory, its new devices run in a scratch view of the lab, and the
diff steps show them with the spines they join. The user's inventory, the lab's own devices, their addresses and the
lab's STATE/inventory are exactly as they were afterwards. Then the real run onboards into the inventory, the lab
follows it (`lab sync`), and the rack is pushed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from labkit import ROOT
from network import base_port, free_network
from pristine import EXAMPLE

BOOK = str(ROOT / "tasks" / "onboard-rack.yaml")
RACK9 = {"leaf5", "leaf6", "gpu09", "gpu10", "gpu11", "gpu12"}


@pytest.fixture(params=["per-device", "shared"])
def operator(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[tuple[Path, Path, dict[str, str]]]:
    """A copy of the example inventory, and the environment of an operator's shell: a lab on a 127.x address per
    device, or (as without per-device loopback addresses) on 127.0.0.1 with a block of ports per device."""
    inventory, state = tmp_path / "inventory", tmp_path / "state"
    shutil.copytree(EXAMPLE, inventory)
    network = free_network()
    env = {k: v for k, v in os.environ.items() if not k.startswith("FABCONF_")}
    env |= {
        "FABCONF_LAB_NETWORK": network,
        "FABCONF_AUDIT_LOG": str(tmp_path / "audit.jsonl"),
        "FABCONF_LOCK_DIR": str(tmp_path / "locks"),
    }
    if request.param == "shared":
        env |= {"FABCONF_LAB_PORTS": "shared", "FABCONF_LAB_BASE_PORT": str(base_port(network))}
    try:
        yield inventory, state, env
    finally:
        _fab(env, "lab", "down", "--state", str(state))


def _fab(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fabconf", *args], capture_output=True, text=True, env=env, timeout=600, check=False
    )


def _files(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def test_a_rack_is_rehearsed_in_a_scratch_view_then_onboarded_into_the_running_lab(
    operator: tuple[Path, Path, dict[str, str]],
) -> None:
    inventory, state, env = operator
    where = ["-i", str(inventory), "--state", str(state)]
    assert _fab(env, "lab", "up", *where).returncode == 0
    mine, lab_inventory = _files(inventory), _files(state / "inventory")
    slots = (state / "slots.json").read_bytes()
    check = _fab(env, "run", BOOK, "-e", "rack=rack9", "-e", "pod=pod1", "--check", "--lab", *where)
    text = check.stdout + check.stderr
    assert check.returncode in (0, 2), text[-4000:]  # 2: the diffs found changes
    assert "Traceback" not in text
    assert "== runbook: onboard rack9 into pod1 (check mode: no changes)" in text
    assert "new devices in a scratch view of it: gpu09, gpu10, gpu11, gpu12, leaf5, leaf6" in text
    assert "== step 4: diff" in text  # the push became a diff
    for name in RACK9 | {"spine1", "spine2"}:
        assert f"{name}" in check.stdout, name
    assert "not in the running lab" not in text
    # nothing of the user's changed: the inventory, the lab's devices and where they are, the lab's inventory
    assert _files(inventory) == mine
    assert _files(state / "inventory") == lab_inventory
    assert (state / "slots.json").read_bytes() == slots
    status = _fab(env, "lab", "status", "--state", str(state)).stdout
    assert not any(f"{name} " in status for name in RACK9), status
    # the real run: onboarded into the inventory, the lab follows it, the rack and the spines are pushed
    real = _fab(env, "run", BOOK, "-e", "rack=rack9", "-e", "pod=pod1", "--lab", "--yes", *where)
    text = real.stdout + real.stderr
    assert "== the lab follows" in text and "added gpu09, gpu10, gpu11, gpu12, leaf5, leaf6" in text, text[-4000:]
    assert "== step 4: push" in text and "Traceback" not in text
    hosts = yaml.safe_load((state / "inventory" / "hosts.yaml").read_text())
    assert set(hosts) >= RACK9
    before = yaml.safe_load(lab_inventory["hosts.yaml"].decode())
    assert {n: hosts[n] for n in before} == before  # the lab's own devices never moved
    assert real.returncode == 0, text[-4000:]
