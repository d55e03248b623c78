"""A greenfield fabric brought up pod by pod, as the docs' recipe does it: super-spines, then pod1, then pod2 of
a fresh `examples/two-pods` lab. A session to a peer outside the run that has never received fabconf's intent is
pending, not a failure (the super-spine canary rolled back on it); a session to a peer that holds intent but is
down still fails verify."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from labkit import ROOT, fab, inv, lab_fixture

from fabconf.compile.pipeline import compile_inventory
from fabconf_lab.orchestrator import Lab

TWO_PODS = ROOT / "examples" / "two-pods"


@pytest.fixture
def lab(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Lab]:
    source = tmp_path / "inventory"
    shutil.copytree(TWO_PODS, source)
    yield from lab_fixture(tmp_path, monkeypatch, source)


def _push(lab: Lab, capsys: pytest.CaptureFixture[str], limit: str) -> dict[str, tuple[str, str]]:
    code, text = fab(capsys, "push", "-i", inv(lab), "--limit", limit, "--yes", "--bgp-wait", "15", "--format", "json")
    report = json.loads(text[text.index("{") :])
    outcomes = {d["device"]: (d["state"], d["message"]) for d in report["devices"]}
    assert code == 0, outcomes
    assert {state for state, _ in outcomes.values()} == {"applied"}, outcomes
    return outcomes


def test_pod_by_pod_bring_up_then_the_whole_fabric_verifies(lab: Lab, capsys: pytest.CaptureFixture[str]) -> None:
    first = _push(lab, capsys, "super_spines")
    for name in ("ss1", "ss2"):  # the pod spines have no fabconf intent yet: pending, named, not failed
        assert "pending: p1-spine1, p1-spine2, p2-spine1, p2-spine2" in first[name][1], first
    pod1 = _push(lab, capsys, "pod1:!super_spines")
    assert not any("pending" in message for _, message in pod1.values()), pod1  # no BGP peer in pod2
    _push(lab, capsys, "pod2:!super_spines")

    code, text = fab(capsys, "verify", "-i", inv(lab), "--bgp-wait", "15", "--format", "json")
    report = json.loads(text[text.index("{") :])
    assert code == 0, text[-3000:]
    assert {d["state"] for d in report["devices"]} == {"verified"}
    assert not any("pending" in d["message"] for d in report["devices"]), "the whole fabric holds intent"
    # what passed, with evidence: every switch's sessions n/n, MTUs, LLDP links, each leaf's ECMP width per target
    evidence = {d["device"]: d["evidence"] for d in report["devices"]}
    for name, ev in evidence.items():
        assert ev["intent"] == "held" and ev["mtu"]["at_intended_mtu"] == ev["mtu"]["ports"] > 0, (name, ev)
        if not name.startswith(("p1-gpu", "p2-gpu")):
            assert ev["bgp"]["established"] == ev["bgp"]["checked"] > 0, (name, ev)
            assert ev["lldp"]["seen_as_cabled"] == ev["lldp"]["links"] > 0, (name, ev)
    leaf = evidence["p1-leaf1"]["ecmp"]
    assert leaf and all(c["paths"] == c["designed"] for c in leaf), leaf
    code, text = fab(capsys, "verify", "-i", inv(lab), "--limit", "p1-leaf1", "--bgp-wait", "15")
    assert code == 0 and "evidence: MTU" in text and "ECMP" in text and "BGP 2/2 up" in text, text


def test_a_down_session_to_a_peer_that_holds_intent_fails_verify(lab: Lab, capsys: pytest.CaptureFixture[str]) -> None:
    for limit in ("super_spines", "pod1:!super_spines"):
        _push(lab, capsys, limit)
    # pod1 is verified from the super-spines' side while pod2 is still pending
    code, text = fab(capsys, "verify", "-i", inv(lab), "--limit", "super_spines", "--bgp-wait", "5", "--format", "json")
    report = {d["device"]: d for d in json.loads(text[text.index("{") :])["devices"]}
    assert code == 0, text[-3000:]
    assert "pending: p2-spine1, p2-spine2" in report["ss1"]["message"]

    port = next(
        i["name"] for i in compile_inventory(TWO_PODS).data["ss1"]["interfaces"] if i["peer"].startswith("p1-spine1:")
    )
    lab.fault("ss1", "link", f"{port}:down")  # p1-spine1 holds intent; its session from ss1 goes down
    code, text = fab(capsys, "verify", "-i", inv(lab), "--limit", "super_spines", "--bgp-wait", "3", "--format", "json")
    report = {d["device"]: d for d in json.loads(text[text.index("{") :])["devices"]}
    assert code == 1
    assert report["ss1"]["state"] == "failed"
    assert report["ss1"]["message"].startswith("BGP session to 10.254.16.1 (p1-spine1) is not established"), report
    assert report["ss2"]["state"] == "verified"


def test_link_faults_show_in_lab_status(lab: Lab) -> None:
    lab.fault("ss1", "link", "swp1:down")
    lab.fault("p1-gpu01", "link", "ens1f0np0:errors=0.001")
    faults = {d["name"]: d["faults"] for d in lab.status()}
    assert "link swp1:down" in faults["ss1"]
    assert "link Ethernet63/1:down" in faults["p1-spine1"]  # the far end of the cut cable
    assert "link ens1f0np0:errors=0.001" in faults["p1-gpu01"]
    lab.fault("ss1", "link", "swp1:up")
    assert not any(f.startswith("link") for f in {d["name"]: d["faults"] for d in lab.status()}["ss1"])
