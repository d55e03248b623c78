"""The mixed example with SONiC leaves (examples/sonic-mix) end to end against the lab: diff, push, verify,
``verify --cabling``, drift and preflight; an out-of-band change on a SONiC leaf is drift in its section, pushed
back."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from labkit import ROOT, fab, inv, lab_fixture, push_all, scrape, sim

from fabconf_lab.orchestrator import Lab

SONIC_MIX = ROOT / "examples" / "sonic-mix"
SONIC = ("p1-leaf1", "p2-leaf2")


@pytest.fixture
def lab(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Lab]:
    yield from lab_fixture(tmp_path, monkeypatch, SONIC_MIX)


def test_the_mixed_fabric_with_sonic_leaves_through_every_job(lab: Lab, capsys: pytest.CaptureFixture[str]) -> None:
    code, text = fab(capsys, "diff", "-i", inv(lab), "--limit", ",".join(SONIC))
    assert code in (0, 2), text  # a dry run: changes to show
    assert '+    "PORT_QOS_MAP": {' in text and '+    "BGP_NEIGHBOR": {' in text, text[-3000:]  # unified JSON

    code, text = push_all(lab, capsys)
    report = json.loads(text[text.index("{") :])
    summary = {d["device"]: (d["state"], d["message"]) for d in report["devices"]}
    assert code == 0, summary
    assert {summary[name][0] for name in SONIC} == {"applied"}, summary
    for name in SONIC:  # the operator's SNMP_COMMUNITY is no table fabconf owns: the SNMP series stay (issue 38)
        status, body = scrape(lab, name)
        assert status == 200 and "ifHCInUcastPkts{" in body, (name, status, body[:300])

    for args in (("verify", "--bgp-wait", "10"), ("verify", "--cabling", "--bgp-wait", "10")):
        code, text = fab(capsys, *args[:1], "-i", inv(lab), *args[1:])
        assert code == 0, text[-3000:]
    code, text = fab(capsys, "drift", "-i", inv(lab))
    assert code == 0, text[-3000:]
    # preflight's switch checks on the SONiC leaves: ports up at speed, error counters, PFC pauses received
    code, text = fab(capsys, "preflight", "-i", inv(lab), "--limit", ",".join(SONIC), "--format", "json")
    assert code == 0, text[-3000:]
    devices = json.loads(text[text.index("{") :])["devices"]
    assert all(d["state"] == "verified" for d in devices), text
    for d in devices:  # both counters were read twice
        assert {"counters", "pfc"} <= set(d["evidence"]), d["evidence"].keys()
        assert d["evidence"]["pfc"]["pfc_counters"]["Ethernet1"]["3"] == 0, d["evidence"]["pfc"]
    lab.fault("p1-leaf1", "pfc-storm")  # `show pfc counters` counts pause frames received on priority 3
    code, text = fab(capsys, "preflight", "-i", inv(lab), "--limit", "p1-leaf1", "--format", "json")
    lab.fault("p1-leaf1", "clear")
    assert code != 0, text[-3000:]
    (device,) = json.loads(text[text.index("{") :])["devices"]
    assert any(c.startswith("[pfc] Ethernet1 ") and "pause storm" in c for c in device["failed_checks"]), device

    # out of band, on the switch: PFC on a second priority of a host port
    leaf = sim(lab, "p1-leaf1")
    leaf.db.apply([{"op": "replace", "path": "/PORT_QOS_MAP/Ethernet1/pfc_enable", "value": "3,4"}])
    code, text = fab(capsys, "drift", "-i", inv(lab), "--limit", "p1-leaf1", "--format", "json")
    assert code != 0, text
    device = json.loads(text[text.index("{") :])["devices"][0]
    assert device["state"] == "drifted" and "pfc" in json.dumps(device), device
    code, text = fab(capsys, "push", "-i", inv(lab), "--limit", "p1-leaf1", "--yes")
    assert code == 0, text[-3000:]
    assert leaf.db.running()["PORT_QOS_MAP"]["Ethernet1"]["pfc_enable"] == "3"
    assert not leaf.db.checkpoints  # confirmed: the checkpoint is gone
