"""`fabconf lab sync -i DIR`: the running lab follows the inventory, as an operator runs it (the CLI, the lab in the
background). A rack onboarded into the inventory gets simulators, a rack taken out loses them, and every other device
keeps running untouched at its address and ports: across `sync`, and across `lab down` then `lab up`, which once moved
leaf3 from .11 to .15 when four GPU hosts sorted before it. In both layouts: a 127.x address per device, and the
unprivileged one-address layout with a block of ports per device."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from network import base_port, free_network
from pristine import EXAMPLE

ROOT = Path(__file__).resolve().parents[2]
RACK7 = ["gpu09", "gpu10", "gpu11", "gpu12", "leaf5", "leaf6"]


@pytest.fixture(params=["per-device", "shared", "two-processes"])
def layout(request: pytest.FixtureRequest) -> Iterator[tuple[str, dict[str, str]]]:
    """How the lab runs: a 127.x address per device; one address and a block of ports per device; a lab spread over
    two worker processes (`lab up --workers 2`: switches in one, GPU hosts in the other)."""
    network = free_network()
    env = {"FABCONF_LAB_NETWORK": network}
    if request.param == "shared":
        env |= {"FABCONF_LAB_PORTS": "shared", "FABCONF_LAB_BASE_PORT": str(base_port(network))}
    yield request.param, env


def _fabconf(env: dict[str, str], *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("FABCONF_LAB")} | env
    proc = subprocess.run(
        [sys.executable, "-m", "fabconf", *args], capture_output=True, text=True, env=clean, timeout=300, check=False
    )
    if check:
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc


def _endpoints(state: Path) -> dict[str, Any]:
    hosts = yaml.safe_load((state / "inventory" / "hosts.yaml").read_text())
    return {name: (e["hostname"], e["port"], e["connection_options"]) for name, e in hosts.items()}


def _answers(address: str, port: int) -> bool:
    try:
        socket.create_connection((address, port), timeout=2).close()
    except OSError:
        return False
    return True


def test_the_lab_follows_the_inventory_and_no_device_ever_moves(
    layout: tuple[str, dict[str, str]], tmp_path: Path
) -> None:
    kind, env = layout
    inventory, state = tmp_path / "inventory", tmp_path / "state"
    shutil.copytree(EXAMPLE, inventory)
    original = {name: (inventory / name).read_bytes() for name in ("hosts.yaml", "cabling.yaml")}
    where = ["--state", str(state)]
    workers = ["--workers", "2"] if kind == "two-processes" else []
    _fabconf(env, "lab", "up", "-i", str(inventory), *where, *workers)
    try:
        before = _endpoints(state)
        assert len(before) == 14
        _fabconf(env, "lab", "fault", *where, "leaf3", "delay", "0.1")  # a running device's own state
        # a rack is onboarded: the lab follows, the fourteen others stay where they are, running as they were
        _fabconf(env, "onboard", "rack", "--pod", "pod1", "--rack", "rack7", "-i", str(inventory))
        out = _fabconf(env, "lab", "sync", "-i", str(inventory), *where).stdout
        assert f"added: {', '.join(RACK7)}" in out and "removed: -" in out and "kept: 14 device(s)" in out, out
        grown = _endpoints(state)
        assert {n: grown[n] for n in before} == before
        assert set(grown) == set(before) | set(RACK7)
        places = [(address, port) for address, port, _ in grown.values()]
        assert len(places) == len(set(places)), "two devices share an address and port"
        assert all(_answers(*grown[name][:2]) for name in RACK7)
        assert "delay 0.1" in _fabconf(env, "lab", "status", *where).stdout  # leaf3 was never restarted
        # the new devices are lab devices like the others: their SSH keys known, their faults reach them
        known = (state / "known_hosts").read_text()
        for name in ("gpu09", "leaf5"):
            address, _port, options = grown[name]
            ssh = next(iter(options.values()))["extras"].get("ssh_port") or grown[name][1]
            assert f"[{address}]:{ssh} " in known or f"{address} " in known, (name, known)
        assert "faults: auth-refuse" in _fabconf(env, "lab", "fault", *where, "leaf5", "auth-refuse").stdout
        if kind != "shared":  # (one address for all: the lab's inventory has no unique management addresses)
            shown = _fabconf(env, "validate", "-i", str(state / "inventory")).stdout
            assert "valid: 8 switches, 12 GPU hosts" in shown
        # the rack is taken out again: its simulators stop, the others stay
        for name, text in original.items():
            (inventory / name).write_bytes(text)
        out = _fabconf(env, "lab", "sync", "-i", str(inventory), *where).stdout
        assert f"removed: {', '.join(RACK7)}" in out and "added: -" in out, out
        assert _endpoints(state) == before
        assert not any(_answers(*grown[name][:2]) for name in RACK7)
        # back in, then a restart of the lab: nobody moves (leaf3 sorted after four more GPU hosts once moved)
        _fabconf(env, "onboard", "rack", "--pod", "pod1", "--rack", "rack7", "-i", str(inventory))
        _fabconf(env, "lab", "sync", "-i", str(inventory), *where)
        regrown = _endpoints(state)
        assert {n: regrown[n] for n in before} == before
        _fabconf(env, "lab", "down", *where)
        _fabconf(env, "lab", "up", "-i", str(inventory), *where, *workers)
        assert _endpoints(state) == regrown
        if kind != "shared":
            assert regrown["leaf3"][0].endswith(".0.11")
    finally:
        _fabconf(env, "lab", "down", *where, check=False)


def test_sync_without_a_lab_or_with_an_invalid_inventory_says_what_to_do(tmp_path: Path) -> None:
    state = tmp_path / "state"
    out = _fabconf({}, "lab", "sync", "-i", str(EXAMPLE), "--state", str(state), check=False)
    assert out.returncode == 1 and f"no lab is running for {state}: start it with fabconf lab up" in out.stderr
    broken = tmp_path / "inventory"
    shutil.copytree(EXAMPLE, broken)
    (broken / "hosts.yaml").write_text((broken / "hosts.yaml").read_text() + "leaf9: {groups: [nosuchgroup]}\n")
    out = _fabconf({}, "lab", "sync", "-i", str(broken), "--state", str(state), check=False)
    assert out.returncode == 1 and "hosts.yaml: leaf9" in out.stderr and "Traceback" not in out.stderr
