"""Adaptive routing / dynamic load balancing and the gNMI server against the lab, end to end: the example pod's
intent (Cumulus adaptive routing on leaf1 and leaf2, NX-OS DLB on leaf4; a gNMI server on every switch but leaf1)
lands on the simulators, ``verify`` reads adaptive routing back through the drivers' getters, and an out-of-band
change that turns it off on one port makes ``verify`` fail. No mocks: the real drivers over real sockets.
"""

from __future__ import annotations

import json

import pytest
from labkit import fab, inv, napalm_merge, push_all, running, ssh_change

from fabconf_lab.orchestrator import Lab


def _verify(capsys: pytest.CaptureFixture[str], lab: Lab) -> tuple[int, dict[str, dict]]:
    code, out = fab(
        capsys, "verify", "-i", inv(lab), "--limit", "leaf1,leaf2,leaf4", "--bgp-wait", "0", "--format", "json"
    )
    return code, {d["device"]: d for d in json.loads(out)["devices"]}


def test_adaptive_routing_and_gnmi_land_and_verify_reads_adaptive_routing_back(
    lab: Lab, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = push_all(lab, capsys)
    assert code == 0, out
    # the gNMI servers the intent renders are in the switches' running configurations
    assert "management api gnmi" in running(lab, "leaf3")
    assert "feature grpc" in running(lab, "leaf4") and "grpc port 9339" in running(lab, "leaf4")
    assert "gnmi-server" in running(lab, "leaf2") and "gnmi-server" not in running(lab, "leaf1")
    assert "hardware profile dlb" in running(lab, "leaf4")

    code, devices = _verify(capsys, lab)
    assert code == 0, devices
    for name in ("leaf1", "leaf2", "leaf4"):
        assert devices[name]["evidence"]["adaptive_routing"] == {"ports": 2, "on": 2}, devices[name]

    # out of band: adaptive routing off on one Cumulus uplink, the DLB profile gone from the NX-OS leaf
    ssh_change(lab, "leaf2", "nv unset interface swp63 router adaptive-routing", "nv config apply -y")
    napalm_merge(lab, "leaf4", "nxos", "no hardware profile dlb\n")
    before = {n: running(lab, n) for n in ("leaf2", "leaf4")}
    code, devices = _verify(capsys, lab)
    assert code == 1
    assert (
        "adaptive routing / dynamic load balancing is off on swp63 (intended on)" in devices["leaf2"]["failed_checks"]
    )
    assert (
        "adaptive routing / dynamic load balancing is off on Ethernet1/63, Ethernet1/64 (intended on)"
        in devices["leaf4"]["failed_checks"]
    ), devices["leaf4"]
    assert devices["leaf1"]["state"] == "verified"
    assert {n: running(lab, n) for n in ("leaf2", "leaf4")} == before  # verify changes nothing
