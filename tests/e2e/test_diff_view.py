"""One diff to read: every platform shows a unified diff of its own configuration (running -> intended) for
what fabconf owns; ``--commands`` shows exactly what is sent. A one-line ECN change is one -/+ pair."""

from __future__ import annotations

import json

import pytest
import yaml
from labkit import fab, inv, push_all

from fabconf.drivers.textdiff import counts
from fabconf_lab.orchestrator import Lab

SWITCHES = ("spine1", "spine2", "leaf1", "leaf2", "leaf3", "leaf4")


def test_a_one_line_ecn_change_is_one_pair_on_every_platform(lab: Lab, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = push_all(lab, capsys)
    assert code == 0, out
    fabric = lab.state_dir / "inventory" / "fabric.yaml"
    doc = yaml.safe_load(fabric.read_text())
    doc["roce"]["ecn"]["min_threshold_bytes"] = 200000
    doc["hosts"]["gid_index"] = 5  # and on the hosts, one NCCL line
    fabric.write_text(yaml.safe_dump(doc, sort_keys=False))

    code, out = fab(capsys, "diff", "-i", inv(lab), "--format", "json")
    assert code == 2, out
    devices = {d["device"]: d for d in json.loads(out)["devices"]}
    assert [d for d in devices] == [*SWITCHES[:2], *SWITCHES[2:], *(n for n in devices if n.startswith("gpu"))]
    for name in SWITCHES:
        d = devices[name]
        assert d["state"] == "changes", d
        assert d["diff"].startswith(f"--- {name} (running)\n+++ {name} (intended)\n@@"), d["diff"]
        assert counts(d["diff"]) == (1, 1), d["diff"]
        (removed,) = [ln for ln in d["diff"].splitlines() if ln.startswith("-") and not ln.startswith("---")]
        (added,) = [ln for ln in d["diff"].splitlines() if ln.startswith("+") and not ln.startswith("+++")]
        assert "150" in removed and "200" in added, d["diff"]
        assert d["commands"]  # what would be sent is there too, in the device's own terms
    for name in (n for n in devices if n.startswith("gpu")):
        d = devices[name]
        assert d["diff"].startswith(f"--- {name} (running)\n+++ {name} (intended)\n@@"), d["diff"]
        assert counts(d["diff"]) == (1, 1), d["diff"]
        assert "-  NCCL_IB_GID_INDEX=3\n+  NCCL_IB_GID_INDEX=5\n" in d["diff"]

    code, out = fab(capsys, "diff", "-i", inv(lab), "--limit", "leaf1", "--commands")
    assert code == 2
    assert "nv set" in out and "(running)" not in out  # NVUE commands, not the configuration diff
    code, out = fab(capsys, "diff", "-i", inv(lab), "--limit", "leaf3")
    assert "+1 -1 line(s) would change" in out
