"""The three-tier example end to end against the lab: push every tier, then verify BGP on every tier, the
designed ECMP width across pods, and each GPU host's per-NIC addresses, rules, routes and sysctls as the host
itself shows them."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from labkit import ROOT, fab, inv, lab_fixture, push_all, sim

from fabconf.cli import main
from fabconf.compile.pipeline import compile_inventory
from fabconf_lab.orchestrator import Lab

TWO_PODS = ROOT / "examples" / "two-pods"


@pytest.fixture
def lab(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Lab]:
    """The two-pod example grown by a third pod with `fabconf onboard pod` (its spines to both super-spines, a
    rack of two leaves and two hosts), no hand edit."""
    source = tmp_path / "inventory"
    shutil.copytree(TWO_PODS, source)
    assert main(["onboard", "pod", "-i", str(source)]) == 0
    yield from lab_fixture(tmp_path, monkeypatch, source)


def test_push_then_verify_across_tiers(lab: Lab, capsys: pytest.CaptureFixture[str]) -> None:
    code, text = push_all(lab, capsys)
    report = json.loads(text[text.index("{") :])
    summary = {d["device"]: (d["state"], d["message"], d["failed_checks"]) for d in report["devices"]}
    assert code == 0, [f"{k}: {v}" for k, v in summary.items() if v[0] != "applied"] or text[-3000:]
    assert {state for state, _m, _c in summary.values()} == {"applied"}, summary

    code, text = fab(capsys, "verify", "-i", inv(lab), "--bgp-wait", "10")
    assert code == 0, text

    compiled = compile_inventory(TWO_PODS)
    world = sim(lab, "p1-leaf1").world
    for leaf in ("p1-leaf1", "p1-leaf2", "p2-leaf1", "p2-leaf2"):
        paths = world.ecmp_paths(leaf)
        for check in compiled.data[leaf]["verify"]["ecmp"]:
            assert paths.get(check["prefix"]) == check["paths"], (leaf, check, paths)
        # a cross-pod route: every leaf reaches every other leaf's host subnets
        other_pod = "p2" if leaf.startswith("p1") else "p1"
        remote = compiled.data[f"{other_pod}-leaf1"]["vlans"][0]["gateway"]
        network = str(__import__("ipaddress").ip_interface(remote).network)
        assert paths.get(network) == 2, (leaf, network, paths)

    # BGP on every tier: a super-spine has a session up to every spine of the three pods
    sessions = world.bgp_sessions("ss2")
    assert len(sessions) == 6 and all(s.state == "Established" for s in sessions), sessions
    # the onboarded pod reaches the others: its leaf has a path through both of its spines
    assert world.ecmp_paths("p3-leaf5")[compiled.data["p1-leaf1"]["loopback"]] == 2

    host = sim(lab, "p1-gpu01")
    rules = json.loads(host.run("ip -j rule show").stdout)
    assert {"priority": 100, "src": "10.101.0.2", "table": "100"} in rules
    assert {"priority": 101, "src": "10.101.1.2", "table": "101"} in rules
    table = host.run("ip route show table 101").stdout
    assert "10.102.0.0/16 via 10.101.1.1 dev ens1f1np1" in table
    assert host.run("sysctl -n net.ipv4.conf.ens1f1np1.arp_ignore").stdout.strip() == "1"
    addresses = json.loads(host.run("ip -j -4 addr show dev ens1f1np1").stdout)
    assert [a["local"] for a in addresses[0]["addr_info"]] == ["10.101.1.2"]

    # an uplink of p1-leaf2 goes down: verify names the lost session and the ECMP width it costs
    sim(lab, "p1-leaf2").run_cmds(["configure", "interface Ethernet63/1", "shutdown", "end"], "json")
    args = ("verify", "-i", inv(lab), "--limit", "p1-leaf2,p2-leaf1", "--bgp-wait", "1", "--format", "json")
    code, text = fab(capsys, *args)
    assert code != 0, text
    checks = {d["device"]: d["failed_checks"] for d in json.loads(text[text.index("{") :])["devices"]}
    assert "BGP session to 10.254.0.8 (p1-spine1) is not established" in checks["p1-leaf2"], checks
    assert "ECMP to 10.255.1.3/32 (p2-leaf1): 1 next hop(s) 10.254.0.10, designed 2" in checks["p1-leaf2"], checks
    assert checks["p2-leaf1"] == [], checks
