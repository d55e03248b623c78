"""What `fabconf sot export` writes, computed without a Nautobot; and how `sot import` resolves what a device's
groups already give (Nornir's order), so that only the differences land in hosts.yaml."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pristine import EXAMPLE

from fabconf.compile.pipeline import compile_inventory
from fabconf.sot.desired import desired, extra_of
from fabconf.sot.load import _infer_groups, inherited

ROOT = Path(__file__).resolve().parents[3]


def test_the_example_pod_as_nautobot_objects() -> None:
    want = desired(compile_inventory(EXAMPLE), EXAMPLE)
    assert want.location == "pod1"
    leaf2 = want.devices["leaf2"]
    assert (leaf2.role, leaf2.platform, leaf2.model, leaf2.id, leaf2.mgmt) == (
        "leaf",
        "cumulus",
        "SN5600",
        2,
        "192.0.2.12/32",
    )
    assert leaf2.groups == ["leaves", "sn5600"] and leaf2.extra == {"data": {"os_version": "5.15.0", "telemetry": True}}
    assert leaf2.asn == 65102 and leaf2.pod == "pod1"
    uplink = want.interfaces[("leaf1", "swp63")]
    assert uplink.type == "400gbase-x-qsfpdd" and uplink.speed_gbps == 400 and uplink.mtu == 9214  # EOS spine1's cap
    assert uplink.addresses[0].endswith("/31")
    nic = want.interfaces[("gpu01", "ens1f0np0")]
    assert nic.mtu == 9000 and nic.addresses and ("gpu01", "mgmt0") in want.interfaces
    assert len(want.cables) == 24 and want.prefixes["0.0.0.0/0"] == "container"
    assert list(want.devices)[:2] == ["spine1", "spine2"]  # tier by tier


GROUPS: dict[str, Any] = {
    "leaves": {"data": {"role": "leaf"}},
    "pod1_leaves": {"groups": ["leaves"], "data": {"pod": "pod1"}},
    "pod2_leaves": {"groups": ["leaves"], "data": {"pod": "pod2"}},
    "sn5600": {"platform": "cumulus", "data": {"model": "SN5600", "role": "leaf"}},
    "eos": {"platform": "eos", "data": {"model": "DCS-7060X5"}},
    "gpu_hosts": {"platform": "linux", "data": {"role": "gpu_host"}},
}


@pytest.mark.parametrize(
    ("names", "platform", "data"),
    [
        (["pod1_leaves", "eos"], "eos", {"pod": "pod1", "role": "leaf", "model": "DCS-7060X5", "site": "dc1"}),
        (["sn5600", "pod2_leaves"], "cumulus", {"model": "SN5600", "role": "leaf", "pod": "pod2", "site": "dc1"}),
        (["gpu_hosts"], "linux", {"role": "gpu_host", "site": "dc1"}),
        (["nosuch"], None, {"site": "dc1"}),
    ],
)
def test_inherited_follows_nornir_order(names: list[str], platform: str | None, data: dict[str, Any]) -> None:
    assert inherited(GROUPS, {"data": {"site": "dc1"}}, names) == (platform, data)


@pytest.mark.parametrize(
    ("role", "platform", "model", "pod", "groups"),
    [
        ("gpu_host", "linux", None, None, ["gpu_hosts"]),
        ("leaf", "eos", "DCS-7060X5", "pod2", ["pod2_leaves", "eos"]),
        ("leaf", "eos", "DCS-7060X5", None, ["leaves", "eos"]),
        ("leaf", "cumulus", "SN5600", None, None),  # leaves or sn5600 (both say leaf): ambiguous
        ("spine", "eos", "DCS-7060X5", "pod1", None),
    ],
)
def test_groups_are_inferred_only_when_one_choice_fits(
    role: str, platform: str, model: str | None, pod: str | None, groups: list[str] | None
) -> None:
    assert _infer_groups(GROUPS, {}, role, platform, model, pod) == groups


def test_extra_keeps_what_nautobot_has_no_field_for() -> None:
    entry = {
        "hostname": "h",
        "groups": ["g"],
        "platform": "eos",
        "port": 2222,
        "data": {"id": 1, "rack": "r1", "pod": "p", "os_version": "4.33", "asn": 65001},
    }
    assert extra_of(entry) == {"data": {"os_version": "4.33", "asn": 65001}}  # how to connect stays local
