"""Onboarding through the source of truth, both ways, against a real Nautobot and the lab: `fabconf onboard rack
--to URL` records a planned rack in Nautobot (the inventory's files untouched); `fabconf sot import` brings it into
another copy of the inventory, which then renders what a local `fabconf onboard rack` renders, and the grown
fabric diffs, pushes and verifies in the lab. Two of the rack's devices lose fabconf's groups in Nautobot, as a
rack entered by hand would have none: the import infers them from the role, platform and model."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pynautobot
import pytest
from labkit import fab, inv, lab_fixture, push_all
from pristine import EXAMPLE
from sotkit import Nautobot, fabric_copy, rename, rendered

from fabconf.cli import main
from fabconf_lab.orchestrator import Lab


@pytest.fixture
def imported(nautobot: Nautobot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FABCONF_NAUTOBOT_TOKEN", nautobot.token)
    source, name = fabric_copy(EXAMPLE, tmp_path / "source")
    assert main(["sot", "export", "-i", str(source), "--to", nautobot.url]) == 0
    before = {p.name: p.read_bytes() for p in source.iterdir()}
    # the reverse direction: a planned rack recorded in Nautobot, nothing written locally
    args = ["onboard", "rack", "--pod", "pod1", "--rack", "rack7", "-i", str(source), "--to", nautobot.url]
    assert main(args) == 0
    assert {p.name: p.read_bytes() for p in source.iterdir()} == before
    nb = pynautobot.api(nautobot.url, token=nautobot.token)
    location = nb.dcim.locations.get(name=name)
    planned = {d.name for d in nb.dcim.devices.filter(location=location.id, status="Planned")}
    assert planned == {"leaf5", "leaf6", "gpu09", "gpu10", "gpu11", "gpu12"}
    assert nb.dcim.racks.get(location=location.id, name="rack7") is not None
    assert main(args) == 0  # recording it again changes nothing
    # as if entered by hand: two of the new devices without fabconf's groups (inferred from role, platform, model)
    for device in ("leaf5", "gpu09"):
        nb.dcim.devices.get(name=device, location=location.id).update({"custom_fields": {"fabconf_groups": None}})
    # from Nautobot into a second copy of the inventory
    copy = tmp_path / "copy"
    shutil.copytree(source, copy)
    assert main(["sot", "import", "--from", nautobot.url, "-i", str(copy)]) == 0
    # ... which renders what onboarding the same rack locally renders
    local = tmp_path / "local"
    shutil.copytree(source, local)
    rename(local, name)
    assert main(["onboard", "rack", "--pod", "pod1", "--rack", "rack7", "-i", str(local)]) == 0
    assert rendered(copy, tmp_path / "r-copy") == rendered(local, tmp_path / "r-local")
    return copy


@pytest.fixture
def lab(imported: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Lab]:
    yield from lab_fixture(tmp_path, monkeypatch, imported)


def test_a_rack_recorded_in_nautobot_imports_pushes_and_verifies(lab: Lab, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert {"leaf5", "leaf6", "gpu09", "gpu12"} <= set(lab.devices)
    code, text = fab(capsys, "diff", "-i", inv(lab), "--limit", "rack7")
    assert code == 2 and "leaf5" in text, text[-2000:]  # the new rack's changes pending
    code, text = push_all(lab, capsys)
    states = {d["device"]: d["state"] for d in json.loads(text[text.index("{") :])["devices"]}
    assert code == 0 and set(states.values()) == {"applied"}, states
    code, text = fab(capsys, "verify", "-i", inv(lab), "--limit", "rack7,spines")
    assert code == 0, text[-2000:]
