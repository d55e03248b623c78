"""Releases the inventory and the device disagree on, read from what the device itself reports: a release-gated
feature (NX-OS DLB from 10.5(1)F) asked of a switch that runs an older release fails before anything is staged,
naming both releases; a Cumulus release newer than fabconf knows runs in the lab as the device would report it,
and is pushed with ``data.assume_release`` and a warning that names both."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from labkit import fab, inv, lab_fixture, running, sim

from fabconf_lab.orchestrator import Lab

ROOT = Path(__file__).resolve().parents[2]


def _edited(tmp_path: Path, **data: dict[str, object]) -> Path:
    """A copy of the example inventory with ``data`` set on the named hosts."""
    copy = tmp_path / "inventory-src"
    shutil.copytree(ROOT / "inventory", copy)
    hosts = yaml.safe_load((copy / "hosts.yaml").read_text())
    for name, values in data.items():
        hosts[name].setdefault("data", {}).update(values)
    (copy / "hosts.yaml").write_text(yaml.safe_dump(hosts, sort_keys=False))
    return copy


@pytest.fixture
def old_nxos(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Lab]:
    """The lab's leaf4 runs NX-OS 10.3(4a) (without DLB); the inventory then says 10.5(2)F, as the example does."""
    source = _edited(tmp_path, leaf4={"os_version": "10.3(4a)", "load_balancing": "ecmp"})
    for the_lab in lab_fixture(tmp_path, monkeypatch, source):
        hosts_file = Path(inv(the_lab)) / "hosts.yaml"
        hosts = yaml.safe_load(hosts_file.read_text())
        hosts["leaf4"]["data"]["os_version"] = "10.5(2)F"
        del hosts["leaf4"]["data"]["load_balancing"]
        hosts_file.write_text(yaml.safe_dump(hosts, sort_keys=False))
        yield the_lab


def test_dlb_asked_of_an_older_release_fails_before_staging(old_nxos: Lab, capsys: pytest.CaptureFixture[str]) -> None:
    before = running(old_nxos, "leaf4")
    args = ["-i", inv(old_nxos), "--limit", "leaf4", "--format", "json"]
    code, text = fab(capsys, "push", *args, "--yes")
    assert code != 0, text
    report = json.loads(text[text.index("{") :])
    (leaf4,) = report["devices"]
    assert leaf4["state"] == "failed", leaf4
    assert (
        "the device runs NX-OS 10.3(4a) but the inventory says 10.5(2)F: it cannot run adaptive routing / dynamic "
        "load balancing: NX-OS 10.3(4a) does not have it (needs 10.5(1)F or later)"
    ) in leaf4["message"]
    assert "roll" not in leaf4["message"]  # refused before staging: nothing committed, nothing rolled back
    assert running(old_nxos, "leaf4") == before


@pytest.fixture
def newer_cumulus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Lab]:
    """The lab's leaf2 runs Cumulus 5.16.0 (NVIDIA's 5.16 schema), a release newer than fabconf knows."""
    source = _edited(tmp_path, leaf2={"os_version": "5.16.0", "assume_release": "5.15"})
    yield from lab_fixture(tmp_path, monkeypatch, source)


def test_a_newer_cumulus_release_is_pushed_as_the_assumed_one(
    newer_cumulus: Lab, capsys: pytest.CaptureFixture[str]
) -> None:
    leaf2 = sim(newer_cumulus, "leaf2")
    assert leaf2.release == "5.16"  # the simulator validates against NVIDIA's 5.16 schema and reports 5.16.0
    code, text = fab(capsys, "push", "-i", inv(newer_cumulus), "--limit", "leaf2", "--yes", "--bgp-wait", "0")
    assert code == 0, text
    assert (
        "leaf2: Cumulus 5.16.0 is newer than the releases fabconf renders for; it is rendered as Cumulus 5.15 "
        "(data.assume_release)"
    ) in text
    # without the key, the same device is refused by validate, naming it
    hosts_file = Path(inv(newer_cumulus)) / "hosts.yaml"
    hosts = yaml.safe_load(hosts_file.read_text())
    del hosts["leaf2"]["data"]["assume_release"]
    hosts_file.write_text(yaml.safe_dump(hosts, sort_keys=False))
    code, text = fab(capsys, "diff", "-i", inv(newer_cumulus), "--limit", "leaf2")
    assert code != 0 and 'set data.assume_release: "5.15"' in text, text
