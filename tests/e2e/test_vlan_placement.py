"""A storage VLAN placed on named leaves and a service VLAN on every leaf, pushed to the lab: each lands, with its
SVI gateway, on the leaves it names (Cumulus, EOS and NX-OS alike) and on no other device, and a second diff is
empty."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from labkit import fab, inv, push_all, sim

from fabconf_lab.orchestrator import Lab


def test_placed_vlans_land_where_intended(lab: Lab, capsys: pytest.CaptureFixture[str]) -> None:
    fabric_file = Path(inv(lab)) / "fabric.yaml"
    fabric = yaml.safe_load(fabric_file.read_text())
    fabric["vlans"] += [
        {"id": 300, "name": "STORAGE", "leaves": ["leaf1", "leaf3", "leaf4"], "subnet_pool": "10.30.0.0/16"},
        {"id": 301, "name": "SERVICE", "leaves": "all", "subnet_pool": "10.31.0.0/16"},
    ]
    fabric_file.write_text(yaml.safe_dump(fabric, sort_keys=False))

    code, out = push_all(lab, capsys)
    assert code == 0, out
    assert {d["state"] for d in json.loads(out)["devices"]} == {"applied"}

    leaf1 = sim(lab, "leaf1").store.tree("applied")  # Cumulus (NVUE): the bridge's VLAN and the SVI
    assert {"300", "301"} <= set(leaf1["bridge"]["domain"]["br_default"]["vlan"])
    assert "10.30.0.1/24" in leaf1["interface"]["vlan300"]["ip"]["address"]
    leaf2 = sim(lab, "leaf2").store.tree("applied")  # Cumulus, not named: the service VLAN only
    assert "300" not in leaf2["bridge"]["domain"]["br_default"]["vlan"] and "vlan300" not in leaf2["interface"]
    assert "10.31.1.1/24" in leaf2["interface"]["vlan301"]["ipv4"]["address"]  # leaf2 runs 5.15: ipv4
    eos = sim(lab, "leaf3").running_config()
    assert "vlan 300\n   name STORAGE" in eos and "interface Vlan300\n   mtu 9214\n   ip address 10.30.2.1/24" in eos
    nxos = sim(lab, "leaf4").running_config()
    assert "vlan 300\n  name STORAGE" in nxos and "interface Vlan300\n  mtu 9216\n  ip address 10.30.3.1/24" in nxos
    for other in ("spine1", "spine2"):
        assert "Vlan300" not in sim(lab, other).running_config()

    code, out = fab(capsys, "diff", "-i", inv(lab), "--format", "json")
    assert code == 0, out
