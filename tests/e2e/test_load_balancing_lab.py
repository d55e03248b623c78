"""Adaptive routing / dynamic load balancing and the gNMI server against the lab, end to end: the example pod's
intent (Cumulus adaptive routing on leaf1 and leaf2, NX-OS DLB on leaf4; a gNMI server on every switch but leaf1)
lands on the simulators, ``verify`` reads adaptive routing back through the drivers' getters, and an out-of-band
change that turns it off on one port makes ``verify`` fail. No mocks: the real drivers over real sockets.
"""

from __future__ import annotations

import json

import napalm
import paramiko
import pytest
from labkit import PASSWORD, fab, inv, push_all, running

from fabconf_lab.orchestrator import Lab


def _ssh(lab: Lab, name: str, *commands: str) -> None:
    client = paramiko.SSHClient()
    client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
    dev = lab.devices[name]
    client.connect(dev.address, dev.service_ports.ssh, lab.username, PASSWORD, look_for_keys=False, allow_agent=False)
    try:
        for command in commands:
            _stdin, stdout, stderr = client.exec_command(command, timeout=10)
            assert stdout.channel.recv_exit_status() == 0, (command, stdout.read(), stderr.read())
    finally:
        client.close()


def _nxos(lab: Lab, name: str, config: str) -> None:
    args = {"transport": "https", "port": lab.devices[name].service_ports.https}
    driver = napalm.get_network_driver("nxos")(lab.devices[name].address, lab.username, PASSWORD, optional_args=args)
    driver.open()
    try:
        driver.load_merge_candidate(config=config)
        driver.commit_config()
    finally:
        driver.close()


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
    _ssh(lab, "leaf2", "nv unset interface swp63 router adaptive-routing", "nv config apply -y")
    _nxos(lab, "leaf4", "no hardware profile dlb\n")
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
