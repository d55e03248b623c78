"""GPU hosts end to end: fabconf push leaves every lab ConnectX NIC lossless and in line with the switches."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from labkit import fab, inv, lab_fixture
from pristine import EXAMPLE

from fabconf_lab.orchestrator import Lab

HOSTS = [f"gpu0{i}" for i in range(1, 9)]


def test_push_hosts_then_diff_is_empty(lab: Lab, capsys: pytest.CaptureFixture[str]) -> None:
    fabric = Path(inv(lab)) / "fabric.yaml"
    doc = yaml.safe_load(fabric.read_text())
    doc["hosts"]["mlxconfig"]["ROCE_CC_PRIO_MASK_P1"] = 8  # DCQCN on priority 3 only: a firmware change
    fabric.write_text(yaml.safe_dump(doc, sort_keys=False))

    code, out = fab(capsys, "diff", "-i", inv(lab), "--limit", "gpu_hosts", "--format", "json")
    assert code == 2
    devices = {d["device"]: d for d in json.loads(out)["devices"]}
    diff = devices["gpu01"]["diff"]  # the NIC-state document, running -> intended, as a unified diff
    assert diff.startswith("--- gpu01 (running)\n+++ gpu01 (intended)\n")
    assert "-  trust: pcp\n" in diff and "+  trust: dscp\n" in diff
    assert "-  mtu: 1500\n" in diff and "+  mtu: 9000\n" in diff
    assert "-  ROCE_CC_PRIO_MASK_P1: '255'\n+  ROCE_CC_PRIO_MASK_P1: '8'\n" in diff
    commands = devices["gpu01"]["commands"].splitlines()  # exactly what a push would run
    assert "sudo -n mlnx_qos -i ens1f0np0 --trust dscp" in commands
    assert "sudo -n mlxconfig -d 0000:17:00.0 -y set ROCE_CC_PRIO_MASK_P1=8" in commands

    code, out = fab(
        capsys, "push", "-i", inv(lab), "--limit", "gpu_hosts", "--yes", "--batch", "100%", "--format", "json"
    )
    report = json.loads(out)
    assert code == 0, json.dumps(report, indent=1)
    for device in report["devices"]:
        assert device["state"] == "applied"
        assert "pending until firmware reset or reboot" in device["message"]
        assert "ROCE_CC_PRIO_MASK_P1=8" in device["message"]

    for name in HOSTS:
        state = lab.devices[name].sim.state
        for nic in state.nics:
            assert nic.trust == "dscp", (name, nic.netdev)
            assert nic.pfc == [0, 0, 0, 1, 0, 0, 0, 0]
            assert nic.ecn_np[3] == 1 and nic.ecn_rp[3] == 1 and sum(nic.ecn_np) == 1
            assert nic.roce_tos == 106 and nic.mtu == 9000
            assert nic.mlx_next["ROCE_CC_PRIO_MASK_P1"] == 8 and nic.mlx_current["ROCE_CC_PRIO_MASK_P1"] == 255
        nccl = state.files["/etc/nccl.conf"]
        assert "NCCL_IB_TC=106" in nccl and "NCCL_IB_HCA==mlx5_0:1,mlx5_1:1" in nccl
        assert "fabconf-roce.service" in state.units_enabled

    code, out = fab(capsys, "diff", "-i", inv(lab), "--limit", "gpu_hosts", "--format", "json")
    assert code == 0, out

    # a reboot loses the runtime NIC settings; the boot unit fabconf installed re-applies them
    lab.devices["gpu03"].sim.reboot()
    nic = lab.devices["gpu03"].sim.state.nics[0]
    assert nic.trust == "dscp" and nic.mtu == 9000 and nic.mlx_current["ROCE_CC_PRIO_MASK_P1"] == 8
    code, out = fab(capsys, "diff", "-i", inv(lab), "--limit", "gpu03")
    assert code == 0, out


def test_garbled_host_is_a_clear_per_host_error(lab: Lab, capsys: pytest.CaptureFixture[str]) -> None:
    lab.fault("gpu02", "garbled")
    code, out = fab(capsys, "diff", "-i", inv(lab), "--limit", "gpu01,gpu02", "--format", "json")
    assert code == 1
    states = {d["device"]: d for d in json.loads(out)["devices"]}
    assert states["gpu02"]["state"] == "failed" and states["gpu02"]["message"]
    assert "Traceback" not in out
    assert states["gpu01"]["state"] == "changes"


@pytest.fixture
def dual_port_lab(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Lab]:
    """The example pod with each GPU host's two NICs declared, as docs/inventory documents, as the two ports of
    one card by ``adapter`` + ``port`` (no ``pci``), and a DCQCN mask and CNP priority for both ports."""
    source = tmp_path / "inventory"
    shutil.copytree(EXAMPLE, source)
    groups = yaml.safe_load((source / "groups.yaml").read_text())
    for port, nic in enumerate(groups["gpu_hosts"]["data"]["nics"], start=1):
        nic.update(adapter="cx7-a", port=port)
    (source / "groups.yaml").write_text(yaml.safe_dump(groups, sort_keys=False))
    fabric = yaml.safe_load((source / "fabric.yaml").read_text())
    fabric["hosts"]["mlxconfig"] |= {"ROCE_CC_PRIO_MASK_P1": 8, "CNP_802P_PRIO_P1": 6}
    (source / "fabric.yaml").write_text(yaml.safe_dump(fabric, sort_keys=False))
    yield from lab_fixture(tmp_path, monkeypatch, source)


def test_push_hosts_with_dual_port_cards_declared_by_adapter(
    dual_port_lab: Lab, capsys: pytest.CaptureFixture[str]
) -> None:
    """The lab host has the card the inventory declares: one dual-port card, whose firmware takes the second
    port's ``_P2`` keys (the lab used to invent a single-port card per NIC, and the push rolled back with
    "CNP_802P_PRIO_P2 not supported")."""
    lab = dual_port_lab
    host = lab.devices["gpu01"].sim
    ports = host.state.nics
    assert len({nic.pci.rsplit(".", 1)[0] for nic in ports}) == 1, [nic.pci for nic in ports]
    assert sorted(nic.pci.rsplit(".", 1)[1] for nic in ports) == ["0", "1"]

    code, out = fab(capsys, "push", "-i", inv(lab), "--limit", "gpu01,gpu02", "--yes", "--format", "json")
    report = json.loads(out)
    assert code == 0, json.dumps(report, indent=1)
    assert {d["state"] for d in report["devices"]} == {"applied"}, report
    for name in ("gpu01", "gpu02"):
        first = min(lab.devices[name].sim.state.nics, key=lambda nic: nic.pci)  # the card's firmware lives here
        for key, value in {"ROCE_CC_PRIO_MASK": 8, "CNP_802P_PRIO": 6, "LINK_TYPE": 2}.items():
            assert first.mlx_next[f"{key}_P1"] == value and first.mlx_next[f"{key}_P2"] == value, (name, key)
    code, out = fab(capsys, "diff", "-i", inv(lab), "--limit", "gpu01,gpu02")
    assert code == 0, out
