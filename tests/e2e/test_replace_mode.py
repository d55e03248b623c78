"""`config_mode: replace` never locks fabconf out: the rendered configurations carry no management plane, the
switches run theirs (eAPI, NX-API, NVUE over eth0, users, management interfaces), and after a replace push
every switch still answers its API -- the lab refuses API calls once a replace drops it. The operator's SNMP agent
stays too (issue 38): the lab serves a switch's SNMP series only while it has one (``fabconf_lab.metrics``)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from labkit import fab, inv, lab_fixture, scrape, sim
from pristine import EXAMPLE

from fabconf.compile.pipeline import compile_inventory
from fabconf.compile.render import render
from fabconf_lab.orchestrator import Lab


@pytest.fixture
def lab(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Lab]:
    source = tmp_path / "inventory"
    shutil.copytree(EXAMPLE, source)
    defaults = yaml.safe_load((source / "defaults.yaml").read_text())
    defaults["data"]["config_mode"] = "replace"
    (source / "defaults.yaml").write_text(yaml.safe_dump(defaults))
    yield from lab_fixture(tmp_path, monkeypatch, source)


def test_replace_push_keeps_every_switch_reachable(lab: Lab, capsys: pytest.CaptureFixture[str]) -> None:
    compiled = compile_inventory(Path(inv(lab)))
    rendered = {n: render(d) for n, d in compiled.data.items()}
    assert "management api http-commands" not in rendered["leaf3"]  # the keep is what saves it
    assert "feature nxapi" not in rendered["leaf4"]
    assert "eth0" not in rendered["leaf1"]
    code, text = fab(capsys, "push", "-i", inv(lab), "--limit", "spines,leaves", "--yes", "--bgp-wait", "10")
    assert code == 0, text[-3000:]
    assert sim(lab, "leaf3")._eapi_enabled() and sim(lab, "spine1")._eapi_enabled()
    assert "feature nxapi" in sim(lab, "leaf4").device.running.leaves()
    assert "eth0" in sim(lab, "leaf1").store.applied["interface"]
    # the SNMP agent is kept, so every switch's SNMP series stay: a replace that removed it made snmp_exporter answer
    # 500 (the unreachable alert fired, the error, speed and BGP series vanished)
    for name in ("spine1", "spine2", "leaf1", "leaf2", "leaf3", "leaf4"):
        status, body = scrape(lab, name)
        assert status == 200 and "ifHCInUcastPkts{" in body, (name, status, body[:300])
    code, text = fab(capsys, "verify", "-i", inv(lab), "--limit", "spines,leaves", "--bgp-wait", "10")
    assert code == 0, text[-3000:]
