"""A change of queue shares can always be pushed: 60 -> 50 -> 70 % for the RoCE queue, on every switch platform,
in merge and replace mode. A device checks that a policy's shares add up to at most 100 % after every command, so
the share being lowered must go first (raising the other queue first asked for 110 % and was refused on EOS)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from labkit import fab, inv, lab_fixture
from pristine import EXAMPLE

from fabconf.compile.pipeline import compile_inventory
from fabconf_lab.orchestrator import Lab

SWITCHES = "spine1,spine2,leaf1,leaf3"  # eos, nxos, cumulus 5.12, eos; leaf4 (nxos) below too


@pytest.fixture(params=["merge", "replace"])
def lab(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Lab]:
    source = tmp_path / "inventory"
    shutil.copytree(EXAMPLE, source)
    defaults = yaml.safe_load((source / "defaults.yaml").read_text())
    defaults.setdefault("data", {})["config_mode"] = request.param
    (source / "defaults.yaml").write_text(yaml.safe_dump(defaults))
    yield from lab_fixture(tmp_path, monkeypatch, source)


def _set_share(lab: Lab, percent: int) -> None:
    fabric = Path(inv(lab)) / "fabric.yaml"
    doc = yaml.safe_load(fabric.read_text())
    doc["roce"]["ets"]["roce_percent"] = percent
    fabric.write_text(yaml.safe_dump(doc, sort_keys=False))


def test_shares_lowered_and_raised_push_on_every_switch(lab: Lab, capsys: pytest.CaptureFixture[str]) -> None:
    switches = [n for n, d in compile_inventory(Path(inv(lab))).data.items() if d["role"] in ("spine", "leaf")]
    assert {compile_inventory(Path(inv(lab))).data[n]["platform"] for n in switches} == {"eos", "nxos", "cumulus"}
    limit = ",".join(switches)
    for percent in (60, 50, 70):
        _set_share(lab, percent)
        code, text = fab(capsys, "push", "-i", inv(lab), "--limit", limit, "--yes", "--bgp-wait", "0", "--canary", "0")
        assert code == 0, f"roce_percent {percent}: {text[-3000:]}"
        code, text = fab(capsys, "diff", "-i", inv(lab), "--limit", limit)
        assert code == 0, f"roce_percent {percent}: not in sync after the push: {text[-3000:]}"
