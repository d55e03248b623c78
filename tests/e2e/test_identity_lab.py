"""A switch that runs another release line or is another hardware family than its inventory says is refused
per device by diff and push, reading what the device itself reports -- never a silent render for the wrong
release. The lab runs what the inventory names; the inventory then changes under it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from labkit import fab, inv, lab_fixture

from fabconf_lab.orchestrator import Lab


@pytest.fixture
def lab(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Lab]:
    yield from lab_fixture(tmp_path, monkeypatch)


def test_another_release_or_family_is_a_per_device_error(lab: Lab, capsys: pytest.CaptureFixture[str]) -> None:
    hosts_file = Path(inv(lab)) / "hosts.yaml"
    hosts = yaml.safe_load(hosts_file.read_text())
    hosts["leaf1"].setdefault("data", {})["os_version"] = "5.15.0"  # the lab's leaf1 runs 5.12.0
    hosts["leaf3"]["data"]["model"] = "DCS-7280CR3-32P4"  # the lab's leaf3 is a Strata 7060X5
    hosts_file.write_text(yaml.safe_dump(hosts))
    code, text = fab(capsys, "diff", "-i", inv(lab), "--limit", "leaf1,leaf3,leaf2", "--format", "json")
    assert code == 1, text
    states = {d["device"]: d for d in json.loads(text[text.index("{") :])["devices"]}
    assert states["leaf1"]["state"] == "failed"
    assert "the device runs Cumulus 5.12.0 but the configuration is rendered for 5.15.0" in states["leaf1"]["message"]
    assert states["leaf3"]["state"] == "failed"
    assert "the device is a DCS-7060X5-64PE (strata)" in states["leaf3"]["message"]
    assert states["leaf2"]["state"] == "changes"  # the others are unaffected
