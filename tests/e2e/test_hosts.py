"""GPU hosts end to end: fabconf push leaves every lab ConnectX NIC lossless and in line with the switches."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from labkit import fab, inv

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
