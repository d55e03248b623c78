"""Device data has exactly the declared shape (fabconf.compile.devicedata): every golden design snapshot and every
designed device of the example inventory, of the second RoCE profile and of the two-pod example. An undeclared
key fails."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml
from profiles import profile_inventory

from fabconf.compile.devicedata import check_device
from fabconf.compile.pipeline import Compiled, compile_inventory
from fabconf.platforms import platform

GOLDEN = sorted((Path(__file__).resolve().parents[2] / "golden").rglob("design/*.yaml"))


def _dialect(data: dict) -> str:
    return platform(data["platform"]).qos_dialect


@pytest.mark.parametrize("path", GOLDEN, ids=[f"{p.parent.parent.name}/{p.stem}" for p in GOLDEN])
def test_golden_design_snapshots_conform(path: Path) -> None:
    data = yaml.safe_load(path.read_text())
    assert check_device(data, _dialect(data)) == []


def test_every_designed_device_conforms(example: Compiled, two_pods: Compiled, tmp_path: Path) -> None:
    second = compile_inventory(profile_inventory(tmp_path))
    for compiled in (example, second, two_pods):
        for name, data in compiled.data.items():
            assert check_device(data, _dialect(data)) == [], name


@pytest.mark.parametrize(
    ("device", "edit", "problem"),
    [
        ("leaf3", lambda d: d.update(extra=1), "unknown key 'extra'"),
        ("leaf3", lambda d: d.pop("router_id"), "missing key 'router_id'"),
        (
            "leaf4",
            lambda d: d["qos"]["queuing"]["classes"][0].update(bandwidth="50"),
            "qos.queuing.classes[0].bandwidth",
        ),
        ("leaf1", lambda d: d["interfaces"][0].update(kind="trunk"), "interfaces[0].kind"),
        ("gpu01", lambda d: d["nics"][0].update(mtu=True), "nics[0].mtu: expected an integer"),
        ("gpu01", lambda d: d["qos"].update(pfc="0,0,0,1"), "qos.pfc: expected a list"),
    ],
)
def test_a_shape_change_is_caught(example: Compiled, device: str, edit, problem: str) -> None:
    data = copy.deepcopy(example.data[device])
    edit(data)
    problems = check_device(data, _dialect(data))
    assert any(problem in p for p in problems), problems
