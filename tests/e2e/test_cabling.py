"""`fabconf verify --cabling`: LLDP against the cabling plan on switches and on GPU hosts (lldpd), naming every
miscabled, missing and unexpected link; a host whose lldpd does not answer is a failed check, not a silent pass."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from labkit import fab, inv, lab_fixture, sim

from fabconf_lab.orchestrator import Lab


@pytest.fixture
def lab(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Lab]:
    yield from lab_fixture(tmp_path, monkeypatch)


def _checks(capsys: pytest.CaptureFixture[str], lab: Lab, limit: str) -> dict[str, list[str]]:
    args = ("verify", "-i", inv(lab), "--cabling", "--limit", limit, "--format", "json", "--bgp-wait", "0")
    _code, text = fab(capsys, *args)
    return {d["device"]: d["failed_checks"] for d in json.loads(text[text.index("{") :])["devices"]}


def _cabling(checks: list[str]) -> list[str]:
    return [c for c in checks if "LLDP" in c or "cabling" in c]


def test_verify_cabling_names_miscabled_missing_and_unexpected_links(
    lab: Lab, capsys: pytest.CaptureFixture[str]
) -> None:
    checks = _checks(capsys, lab, "leaf1,gpu01,gpu02")
    assert _cabling(checks["leaf1"]) == [] and _cabling(checks["gpu01"]) == [], checks
    world = sim(lab, "leaf1").world
    world.cable("gpu01", "ens1f0np0", "leaf1", "swp2")  # gpu01 and gpu02 swapped on leaf1
    world.cable("gpu02", "ens1f0np0", "leaf1", "swp1")
    world.cable("leaf1", "swp40", "leaf2", "swp40")  # a link the plan does not have
    sim(lab, "gpu03").state.lldpd_running = False
    checks = _checks(capsys, lab, "leaf1,gpu01,gpu03")
    assert "swp1: LLDP sees gpu02:ens1f0np0, the cabling says gpu01:ens1f0np0 (miscabled)" in checks["leaf1"]
    assert "swp40: LLDP sees leaf2:swp40, the cabling has no link here (unexpected)" in checks["leaf1"]
    assert "ens1f0np0: LLDP sees leaf1:swp2, the cabling says leaf1:swp1 (miscabled)" in checks["gpu01"]
    assert any(c.startswith("LLDP could not be read:") and "lldpd" in c for c in checks["gpu03"]), checks["gpu03"]
    lab.devices["gpu01"].sim.run("ip link set dev ens2f0np0 down")
    checks = _checks(capsys, lab, "gpu01")
    assert any(c.startswith("ens2f0np0: no LLDP neighbour, the cabling says leaf2:swp1") for c in checks["gpu01"])
