"""A second RoCE profile pushed to every platform (Cumulus, EOS, NX-OS, GPU hosts) in the lab: other data
DSCP and priority, two lossless priorities, other CNP DSCP/priority and ECN thresholds. Each device ends at
intent (a second diff is empty) holding the profile's values, not the example's."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from labkit import fab, inv, lab_fixture, push_all, running, sim
from profiles import profile_inventory

from fabconf_lab.orchestrator import Lab


@pytest.fixture
def lab(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Lab]:
    yield from lab_fixture(tmp_path, monkeypatch, profile_inventory(tmp_path / "profile"))


def test_profile_b_lands_on_every_platform(lab: Lab, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = push_all(lab, capsys)
    states = {d["device"]: d for d in json.loads(out)["devices"]}
    assert code == 0, {n: (d["state"], d["message"], d["failed_checks"]) for n, d in states.items()}
    assert {d["state"] for d in states.values()} == {"applied"}
    code, out = fab(capsys, "diff", "-i", inv(lab), "--format", "json")
    assert code == 0, out

    eos, nxos = running(lab, "leaf3"), running(lab, "leaf4")
    assert "qos map dscp 34 to traffic-class 4" in eos and "qos map dscp 46 to traffic-class 5" in eos
    assert "priority-flow-control priority 3 no-drop" in eos and "priority-flow-control priority 4 no-drop" in eos
    assert "minimum-threshold 200 kbytes maximum-threshold 2000 kbytes max-mark-probability 50" in eos
    assert "match dscp 34" in nxos and "set qos-group 4" in nxos and "set qos-group 5" in nxos
    assert "pause pfc-cos 3" in nxos and "pause pfc-cos 4" in nxos
    applied = sim(lab, "leaf1").store.tree("applied")
    pfc = applied["qos"]["pfc"]["default-global"]["switch-priority"]
    assert set(pfc) == {"3", "4"}, pfc
    host = sim(lab, "gpu01").state
    for nic in host.nics:
        assert nic.pfc == [0, 0, 0, 1, 1, 0, 0, 0]
        assert nic.roce_tos == 34 << 2 | 2
        assert (nic.cnp_dscp, nic.cnp_802p_prio) == (46, 5)
        assert nic.mlx_next["CNP_DSCP_P1"] == 46 and nic.mlx_next["ROCE_CC_PRIO_MASK_P1"] == 24
    assert "NCCL_IB_QPS_PER_CONNECTION=4" in host.files["/etc/nccl.conf"]
