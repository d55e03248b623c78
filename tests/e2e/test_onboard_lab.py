"""An onboarded rack, end to end: `fabconf onboard rack` on a copy of the example inventory, then the lab of
the grown fabric comes up, the push lands on every device (old and new), and verify passes -- BGP from the new
leaves to both spines, the new hosts' routes -- without a hand edit."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from labkit import ROOT, fab, inv, lab_fixture, push_all, sim
from pristine import EXAMPLE

from fabconf.cli import main
from fabconf_lab.orchestrator import Lab


@pytest.fixture
def lab(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Lab]:
    source = tmp_path / "inventory"
    shutil.copytree(EXAMPLE, source)
    assert main(["onboard", "rack", "--pod", "pod1", "--rack", "rack7", "-i", str(source)]) == 0
    yield from lab_fixture(tmp_path, monkeypatch, source)


def test_an_onboarded_rack_pushes_verifies_and_its_runbook_runs(lab: Lab, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert {"leaf5", "leaf6", "gpu09", "gpu12"} <= set(lab.devices)
    code, text = push_all(lab, capsys)
    states = {d["device"]: d["state"] for d in json.loads(text[text.index("{") :])["devices"]}
    assert code == 0 and set(states.values()) == {"applied"}, states
    code, text = fab(capsys, "verify", "-i", inv(lab), "--limit", "rack7,spines")
    assert code == 0, text[-2000:]
    sessions = {s.remote_device: s.state for s in sim(lab, "leaf5").world.bgp_sessions("leaf5")}
    assert sessions == {"spine1": "Established", "spine2": "Established"}
    # tasks/onboard-rack.yaml on the running fabric (a spine verifies its sessions to every leaf, so the rest of
    # the fabric must be up, as in production): onboard (rack7 is already there: nothing to do), validate,
    # diff and push the rack with the spines
    book = str(ROOT / "tasks" / "onboard-rack.yaml")
    code, text = fab(capsys, "run", book, "-e", "rack=rack7", "-e", "pod=pod1", "-i", inv(lab), "--yes")
    assert code == 0, text[-3000:]
    assert "rack rack7 of pod pod1 is already in" in text and "== step 4: push" in text
